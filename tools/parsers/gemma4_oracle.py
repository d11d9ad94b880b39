#!/usr/bin/env python3
"""Independent reference for the Gemma-4 output parser's golden tests.

Written separately from the C++ state machine (plugins/parsers-gemma4): it
re-parses the WHOLE output prefix after every token (recursive descent with
partial values) and diffs successive snapshots, the "accumulate, parse,
diff" method of spec/gemma4-text-boundary.md section 3.3, where the C++ code
is a single-pass event machine.  The behaviour both implement is described
in plugins/parsers-gemma4/README.md.

Usage: gemma4_oracle.py CASES.json > GOLDEN.json
Each case: {"name", "tokens": [str], "tools": [names], "tool_choice",
"enable_thinking", "prompt_tail", "finish": "stop"|"length"}.
Output per case: the case plus "message" (the OpenAI assistant message, call
ids as "ID0", "ID1", ...), "deltas" (one entry per fed token, then one for
finish: the list of delta objects that step produced) and "finish_reason".
"""
import json
import re
import sys

MARKERS = ["<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", '<|"|>',
           "<|turn>", "<turn|>", "<|tool>", "<tool|>", "<|tool_response>",
           "<tool_response|>", "<|think|>", "<eos>", "<bos>", "<pad>", "<|image>",
           "<|audio>", "<|image|>", "<|audio|>", "<image|>", "<audio|>", "<|video|>"]
DELIM = '<|"|>'
LABEL = "thought\n"
NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
NAME = re.compile(r"(call)?:([A-Za-z0-9_.\-]+)\Z")
NAME_PREFIX_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
WS = " \n\t\r"


class Marker(str):
    """A control token in the unit list (plain characters are str of length 1)."""


def units(text, final):
    """Characters and Marker objects; a tail that may still become a marker is
    cut off unless final."""
    out, i = [], 0
    while i < len(text):
        m = next((m for m in MARKERS if text.startswith(m, i)), None)
        if m:
            out.append(Marker(m))
            i += len(m)
            continue
        rest = text[i:]
        if not final and rest.startswith("<") and any(len(m) > len(rest) and m.startswith(rest) for m in MARKERS):
            break
        out.append(text[i])
        i += 1
    return out


def esc(s):
    return json.dumps(s, ensure_ascii=False)[1:-1]


def bare_json(text):
    t = text.strip(WS)
    if t == "":
        return "null"
    if t in ("true", "false", "null") or NUMBER.match(t):
        return t
    return json.dumps(t, ensure_ascii=False)


# --------------------------------------------------------------- arguments
# Nodes: dicts {"t": "obj"|"arr"|"str"|"bare", ...}.

def parse_value(items, i, n):
    """Value at items[i] (whitespace already skipped).  Returns (node, i)."""
    c = items[i]
    if c == "{" and not isinstance(c, Marker):
        return parse_container(items, i + 1, n, True)
    if c == "[" and not isinstance(c, Marker):
        return parse_container(items, i + 1, n, False)
    if isinstance(c, Marker):  # the delimiter
        j, s = i + 1, ""
        while j < n and not isinstance(items[j], Marker):
            s += items[j]
            j += 1
        if j < n:
            return {"t": "str", "s": s, "closed": True}, j + 1
        return {"t": "str", "s": s, "closed": False}, n
    j, s = i, ""
    while j < n and not (isinstance(items[j], Marker) or items[j] in ",}]"):
        s += items[j]
        j += 1
    if j < n and isinstance(items[j], Marker):
        return {"t": "bare", "s": s, "done": True}, j + 1  # the delimiter is junk
    return {"t": "bare", "s": s, "done": j < n}, j


def parse_container(items, i, n, is_obj):
    node = {"t": "obj" if is_obj else "arr", "items": [], "closed": False}
    close = "}" if is_obj else "]"
    expecting = True  # an element may start (after the opener or a comma)
    while i < n:
        c = items[i]
        if not isinstance(c, Marker) and c in WS:
            i += 1
            continue
        if not expecting:
            if c == ",":
                expecting = True
            elif c == close:
                node["closed"] = True
                return node, i + 1
            i += 1  # anything else between elements is junk
            continue
        if is_obj:
            # A key: <|"|>key<|"|> then ':', or bare text up to ':'.
            if isinstance(c, Marker):
                j, key = i + 1, ""
                while j < n and not isinstance(items[j], Marker):
                    key += items[j]
                    j += 1
                if j >= n:
                    return node, n
                j += 1
                while j < n and (isinstance(items[j], Marker) or items[j] not in ":}"):
                    j += 1
                if j >= n:
                    return node, n
                if items[j] == "}":
                    node["closed"] = True
                    return node, j + 1
                i = j + 1
            elif c == "}":
                node["closed"] = True
                return node, i + 1
            elif c == ",":
                i += 1
                continue
            else:
                j, key = i, ""
                while j < n and (isinstance(items[j], Marker) or items[j] not in ":},"):
                    if not isinstance(items[j], Marker):
                        key += items[j]
                    j += 1
                if j >= n:
                    return node, n
                if items[j] != ":":  # a key without a value is dropped
                    if items[j] == "}":
                        node["closed"] = True
                        return node, j + 1
                    i = j + 1
                    continue
                i = j + 1
            member = [key.strip(WS), None]
            node["items"].append(member)
            while i < n and not isinstance(items[i], Marker) and items[i] in WS:
                i += 1
            if i >= n:
                return node, n
            c = items[i]
            if not isinstance(c, Marker) and c in "},]":
                member[1] = {"t": "bare", "s": "", "done": True}  # missing value: null
                if c == "]":
                    i += 1
                expecting = False
                continue
            member[1], i = parse_value(items, i, n)
            if not value_complete(member[1]):
                return node, n
            expecting = False
        else:
            if not isinstance(c, Marker) and c in ",}":
                i += 1  # an empty element or a stray '}' is skipped
                continue
            if c == "]" and not isinstance(c, Marker):
                node["closed"] = True
                return node, i + 1
            value, i = parse_value(items, i, n)
            node["items"].append(value)
            if not value_complete(value):
                return node, n
            expecting = False
    return node, n


def value_complete(v):
    if v["t"] in ("obj", "arr", "str"):
        return v["closed"]
    return v["done"]


def dump(v, closing):
    """JSON text of a (possibly partial) node.  closing: the call is over, so
    everything open is closed; otherwise only what is certain is written."""
    t = v["t"]
    if t == "str":
        return '"' + esc(v["s"]) + ('"' if v["closed"] or closing else "")
    if t == "bare":
        return bare_json(v["s"]) if (v["done"] or closing) else ""
    parts = []
    for k, item in enumerate(v["items"]):
        if t == "obj":
            key, val = item
            text = '"' + esc(key) + '": '
            if val is None:
                text += "null" if closing else ""
            else:
                text += dump(val, closing)
        else:
            if item["t"] == "bare" and not (item["done"] or closing):
                continue  # not begun as far as the output is concerned
            text = dump(item, closing)
        parts.append((", " if k > 0 else "") + text)
    body = "".join(parts)
    opener, closer = ("{", "}") if t == "obj" else ("[", "]")
    return opener + body + (closer if v["closed"] or closing else "")


# ----------------------------------------------------------------- output

def snapshot(text, final, case):
    """The message as far as text says: {content, reasoning, calls, truncated}."""
    items = units(text, final)
    n = len(items)
    tools = [] if case.get("tool_choice") == "none" else case.get("tools", [])
    content, reasoning, calls = "", "", []
    truncated = False
    tail = case.get("prompt_tail", "")
    last = max(((tail.rfind(m), m) for m in ["<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>",
                                                "<|turn>", "<turn|>", "<|tool_response>", "<tool_response|>"]),
               default=(-1, None))
    in_channel = last[0] >= 0 and last[1] == "<|channel>"
    wrote_label = in_channel and last[0] + len("<|channel>") < len(tail)
    i = 0
    content_said = False

    def reasoning_span(i, expect_label):
        """Reads a reasoning span from items[i]; returns (text, i, closed_by)."""
        s = ""
        while i < n:
            c = items[i]
            if isinstance(c, Marker):
                if c == DELIM:
                    s += '"'
                elif c == "<channel|>" or (c == "<|tool_call>"):
                    return s, i, c
                i += 1
                continue
            s += c
            i += 1
        return s, i, None

    def label_strip(s, closed):
        if s.startswith(LABEL):
            return s[len(LABEL):], True
        if LABEL.startswith(s) and not closed:
            return "", False  # may still become the label: withheld
        if closed and s == "thought":
            return "", True
        return s, True

    # Thinking on: a bare "thought\n" at the very start opens a reasoning span.
    start_reasoning = in_channel
    label_expected = not wrote_label
    if not in_channel and case.get("enable_thinking"):
        lead = ""
        k = 0
        while k < n and not isinstance(items[k], Marker) and len(lead) < len(LABEL):
            lead += items[k]
            k += 1
        if lead == LABEL:
            start_reasoning, label_expected, i = True, False, k
        elif LABEL.startswith(lead) and not final and k == n:
            return {"content": "", "reasoning": "", "calls": [], "truncated": False}

    span = None
    if start_reasoning:
        s, i, by = reasoning_span(i, label_expected)
        if label_expected:
            s, _ = label_strip(s, by is not None or final)
        reasoning += s
        span = (s, by)
        if by == "<channel|>":
            i += 1
    while i < n:
        c = items[i]
        if isinstance(c, Marker):
            if c == "<|channel>":
                s, i, by = reasoning_span(i + 1, True)
                s, _ = label_strip(s, by is not None or final)
                reasoning += s
                span = (s, by)
                if by == "<channel|>":
                    i += 1
                continue
            if c == DELIM:
                content += '"'
                i += 1
                continue
            if c == "<|tool_call>" and tools:
                # The head: "call:NAME" up to '{'.
                j, head = i + 1, ""
                bad = None
                while j < n:
                    d = items[j]
                    if isinstance(d, Marker):
                        bad = "marker"
                        break
                    if d == "{":
                        break
                    head += d
                    ok_prefix = ("call:".startswith(head) or
                                 (head.startswith("call:") and set(head[5:]) <= NAME_PREFIX_CHARS) or
                                 (head.startswith(":") and set(head[1:]) <= NAME_PREFIX_CHARS))
                    if not ok_prefix or len(head) > 256:
                        bad = "char"
                        break
                    j += 1
                if bad is None and j >= n:
                    if final:
                        content += head
                    i = n
                    continue
                if bad == "char":
                    content += head
                    i = j + 1
                    continue
                if bad == "marker":
                    d = items[j]
                    content += head + ('"' if d == DELIM else "")
                    i = j + 1 if d in (DELIM, "<tool_call|>") else j
                    continue
                m = NAME.match(head)
                if not m or m.group(2) not in tools:
                    content += head
                    i = j  # '{' is content
                    continue
                # The arguments, up to the first control token that is not <|"|>.
                k = j
                while k < n and not (isinstance(items[k], Marker) and items[k] != DELIM):
                    k += 1
                tree, used = parse_container(items, j + 1, k, True)
                call = {"name": m.group(2)}
                if tree["closed"]:
                    call["arguments"] = dump(tree, True)
                    i = j + 1 + (used - (j + 1))
                    i = used
                    while i < n and not isinstance(items[i], Marker) and items[i] in WS:
                        i += 1
                    if i < n and items[i] == "<tool_call|>":
                        i += 1
                    truncated = False
                elif k < n:  # closed early by a control token
                    call["arguments"] = dump(tree, True)
                    i = k + 1 if items[k] == "<tool_call|>" else k
                    truncated = False
                else:
                    call["arguments"] = dump(tree, final)
                    truncated = final
                    i = n
                calls.append(call)
                continue
            i += 1  # other control tokens are dropped from content
            continue
        content += c
        i += 1
    if final and span is not None and span[1] is None and content == "" and not calls and span[0]:
        content = span[0]  # a cut-off thought is also the answer
    return {"content": content, "reasoning": reasoning, "calls": calls, "truncated": truncated}


def run_case(case):
    tokens = case["tokens"]
    steps = []
    prev = {"content": "", "reasoning": "", "calls": [], "truncated": False}
    # Snapshots after 0..n tokens, then once more at finish.
    for k in range(len(tokens) + 2):
        final = k == len(tokens) + 1
        snap = snapshot("".join(tokens[:k]), final, case)
        deltas = []
        for field, key in (("reasoning", "reasoning_content"), ("content", "content")):
            assert snap[field].startswith(prev[field]), (case["name"], field, prev[field], snap[field])
            if len(snap[field]) > len(prev[field]):
                deltas.append({key: snap[field][len(prev[field]):]})
        for idx, call in enumerate(snap["calls"]):
            before = prev["calls"][idx]["arguments"] if idx < len(prev["calls"]) else None
            if before is not None:
                assert call["arguments"].startswith(before), (case["name"], before, call["arguments"])
            grown = call["arguments"][len(before or ""):]
            if grown:
                deltas.append({"tool_calls": [{"index": idx, "id": "ID%d" % idx, "type": "function",
                                               "function": {"name": call["name"], "arguments": grown}}]})
        if k > 0:
            steps.append(deltas)
        prev = snap
    final = prev
    message = {"role": "assistant"}
    message["content"] = final["content"] if (final["content"] or not final["calls"]) else None
    if final["reasoning"]:
        message["reasoning_content"] = final["reasoning"]
    if final["calls"]:
        message["tool_calls"] = [{"id": "ID%d" % i, "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}}
                                 for i, c in enumerate(final["calls"])]
    if final["calls"]:
        if final["truncated"]:
            reason = "length"
        else:
            reason = "stop" if isinstance(case.get("tool_choice"), dict) else "tool_calls"
    else:
        reason = "length" if case.get("finish") == "length" else "stop"
    out = dict(case)
    out.update({"message": message, "deltas": steps, "finish_reason": reason})
    return out


def main():
    cases = json.load(open(sys.argv[1], encoding="utf-8"))
    json.dump([run_case(c) for c in cases], sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
