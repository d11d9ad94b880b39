#!/usr/bin/env python3
"""End-to-end check of `seatrt parse`: every golden case's model output (its
tokens joined into text, re-tokenized by the given tokenizer) run through the
parser plugin by the CLI, non-streaming and streaming, must give the golden
message (from the independent oracle) and finish_reason; streamed tool_calls
deltas are OpenAI's: a call's first delta carries index, id, type and
function name, the later ones index and arguments only (so the openai SDK's
stream helper, which concatenates every string it is sent, gets the name once).

Usage: check_cli.py SEATRT TOKENIZER_JSON PLUGIN_DIR GOLDEN_JSON
"""
import json
import re
import subprocess
import sys


def mask_ids(message):
    for i, call in enumerate(message.get("tool_calls") or []):
        assert re.fullmatch(r"call_[A-Za-z0-9]{24}", call["id"]), call["id"]
        call["id"] = "ID%d" % i
    return message


def main():
    seatrt, tokenizer, plugin_dir, golden = sys.argv[1:5]
    failures = 0
    for case in json.load(open(golden, encoding="utf-8")):
        tools = json.dumps([{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                            for n in case["tools"]])
        base = [seatrt, "parse", "--tokenizer", tokenizer, "--tool", "gemma4", "--reasoning", "gemma4",
                "--plugins", plugin_dir, "--tools", tools, "--tool-choice", json.dumps(case["tool_choice"]),
                "--kwargs", json.dumps({"enable_thinking": case["enable_thinking"]}),
                "--prompt-tail", case["prompt_tail"], "--finish", case["finish"]]
        text = "".join(case["tokens"]).encode("utf-8")
        plain = subprocess.run(base, input=text, capture_output=True, check=False)
        streamed = subprocess.run(base + ["--stream"], input=text, capture_output=True, check=False)
        problems = []
        if plain.returncode != 0 or streamed.returncode != 0:
            problems.append("exit %d/%d: %s" % (plain.returncode, streamed.returncode, plain.stderr.decode()))
        else:
            choice = json.loads(plain.stdout)
            if mask_ids(choice["message"]) != case["message"]:
                problems.append("message %s != golden %s" % (json.dumps(choice["message"]), json.dumps(case["message"])))
            if choice["finish_reason"] != case["finish_reason"]:
                problems.append("finish_reason %s != %s" % (choice["finish_reason"], case["finish_reason"]))
            chunks = [line[6:] for line in streamed.stdout.decode().split("\n") if line.startswith("data: ")]
            if chunks[-1] != "[DONE]":
                problems.append("stream does not end with [DONE]")
            content, calls, last_reason = "", {}, None
            for raw in chunks[:-1]:
                c = json.loads(raw)["choices"][0]
                d = c["delta"]
                last_reason = c["finish_reason"] or last_reason
                content += d.get("content") or ""
                for tc in d.get("tool_calls", []):
                    first = tc.get("index") not in calls
                    named = all(k in tc for k in ("id", "type")) and bool(tc.get("function", {}).get("name"))
                    if "index" not in tc or named != first or (not first and "name" in tc.get("function", {})):
                        problems.append("tool_calls delta %s: id/type/name must come in a call's first delta "
                                        "only: %s" % ("first" if first else "later", raw))
                    calls.setdefault(tc["index"], "")
                    calls[tc["index"]] += tc["function"]["arguments"]
            expected_calls = [c["function"]["arguments"] for c in case["message"].get("tool_calls") or []]
            if [calls[i] for i in sorted(calls)] != expected_calls:
                problems.append("streamed arguments %s != %s" % (calls, expected_calls))
            if content != (case["message"]["content"] or ""):
                problems.append("streamed content %r != %r" % (content, case["message"]["content"]))
            if last_reason != case["finish_reason"]:
                problems.append("streamed finish_reason %s" % last_reason)
        status = "ok" if not problems else "FAILED"
        print("%-50s %s" % (case["name"], status))
        for p in problems:
            print("   ", p)
        failures += bool(problems)
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
