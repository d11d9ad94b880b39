#!/usr/bin/env python3
"""Render the chat-template test cases with Python jinja2 the way transformers does (issue 4).

The environment copies transformers' `_compile_jinja_template`: ImmutableSandboxedEnvironment with
trim_blocks and lstrip_blocks, the loopcontrols extension, a `generation` block that renders its
body, `tojson` = json.dumps(ensure_ascii=False, ...), globals raise_exception and strftime_now; the
render passes messages, tools (None when absent), documents=None, add_generation_prompt, the
tokenizer's special tokens and the extra kwargs (apply_chat_template semantics).

Writes tests/fixtures/templates/cases/<case>.json: {"template", "messages", "tools", "kwargs",
"add_generation_prompt", "expected"} or, when jinja2 raised, {"error": message, "raised": true if
it came from raise_exception}.  Also writes the CLI case as plain files under cases/cli/.
Run from the repository root (pip install jinja2==3.1.6):  python3 tools/text/render_oracles.py
"""

from __future__ import annotations

import copy
import json
import pathlib

import jinja2
from jinja2 import ext, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "tests/fixtures/templates"
OUT = TEMPLATES / "cases"
SPECIAL_TOKENS = {"bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>",
                  "pad_token": "<pad>", "mask_token": "<mask>"}


class RaisedByTemplate(Exception):
    pass


class GenerationBlock(ext.Extension):
    """transformers' AssistantTracker, minus the tracking: {% generation %} renders its body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_env() -> ImmutableSandboxedEnvironment:
    def raise_exception(message):
        raise RaisedByTemplate(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get weather for a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1},
        "opts": {"type": "object", "properties": {"hourly": {"type": "boolean"},
                                                  "Zone": {"type": "string", "nullable": True}},
                 "required": ["hourly"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "points": {"type": "array", "items": {"type": "object", "properties": {
            "lat": {"type": "number"}, "lon": {"type": "number"}}}},
        "maybe": {"type": ["string", "null"]},
        "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["city"]}}}
SEARCH_TOOL = {"type": "function", "function": {
    "name": "search", "description": "Search the web for \"things\"\nacross lines",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    "response": {"description": "results", "type": "object"}}}
NOPARAM_TOOL = {"type": "function", "function": {"name": "now", "description": "no params"}}

TOOLS = [WEATHER_TOOL, SEARCH_TOOL, NOPARAM_TOOL]
TYPED_ARGS = {"city": "Paris \"centre\"\n{braces}", "days": 2, "ratio": 0.5, "big": 1e20,
              "whole": 2.0, "flag": True, "off": False, "none": None,
              "opts": {"hourly": True, "Zone": "CET"}, "tags": ["a", "b"], "empty": [],
              "nested": [{"x": 1}, [1, 2]]}


def call(cid, name, arguments):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


U = {"role": "user", "content": "Weather in Paris?"}
GEMMA_CASES = {
    "system_prompt": dict(messages=[{"role": "system", "content": "  You are helpful.  "},
                                    {"role": "user", "content": "Hi"}]),
    "system_prompt_thinking": dict(messages=[{"role": "system", "content": "You are helpful."},
                                             {"role": "user", "content": "Hi"}],
                                   kwargs={"enable_thinking": True}),
    "user_only": dict(messages=[{"role": "user", "content": "Hi"}]),
    "thinking_no_system": dict(messages=[{"role": "user", "content": "Hi"}],
                               kwargs={"enable_thinking": True}),
    "thinking_false_explicit": dict(messages=[{"role": "user", "content": "Hi"}],
                                    kwargs={"enable_thinking": False}),
    "multi_turn": dict(messages=[
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "A1"}, {"role": "user", "content": "Q2 \u00e9\u4e2d\U0001F600"},
        {"role": "assistant", "content": "  A2 with spaces  "}, {"role": "user", "content": "Q3"}]),
    "developer_role": dict(messages=[{"role": "developer", "content": "Dev rules"},
                                     {"role": "user", "content": "Hi"}]),
    "no_generation_prompt": dict(messages=[{"role": "user", "content": "Hi"},
                                           {"role": "assistant", "content": "Hello"}],
                                 add_generation_prompt=False),
    "tools_declared": dict(messages=[U], tools=TOOLS),
    "tools_declared_thinking": dict(messages=[{"role": "system", "content": "Sys"}, U], tools=TOOLS,
                                    kwargs={"enable_thinking": True}),
    "tool_call_typed_arguments": dict(messages=[U, {"role": "assistant", "content": "",
                                                    "tool_calls": [call("c1", "get_weather", TYPED_ARGS)]}],
                                      tools=TOOLS, add_generation_prompt=False),
    "tool_call_pending_generation": dict(messages=[U, {"role": "assistant", "content": None,
                                                       "tool_calls": [call("c1", "get_weather", {"city": "Paris"})]}],
                                         tools=TOOLS),
    "tool_response": dict(messages=[U, {"role": "assistant", "content": "",
                                        "tool_calls": [call("c1", "get_weather", {"city": "Paris", "days": 2})]},
                                    {"role": "tool", "tool_call_id": "c1", "content": "{\"temp\": 15, \"sky\": \"sunny\"}"}],
                          tools=TOOLS),
    "tool_response_thinking": dict(messages=[U, {"role": "assistant", "content": "", "reasoning": "Need weather.",
                                                 "tool_calls": [call("c1", "get_weather", {"city": "Paris"})]},
                                             {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
                                   tools=TOOLS, kwargs={"enable_thinking": True}),
    "parallel_calls_and_responses": dict(messages=[U, {"role": "assistant", "content": "",
                                                       "tool_calls": [call("c1", "get_weather", {"city": "Paris"}),
                                                                      call("c2", "search", {"q": "Paris events"})]},
                                                   {"role": "tool", "tool_call_id": "c2", "content": "concert"},
                                                   {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
                                                   {"role": "tool", "name": "search", "content": "no id"}],
                                         tools=TOOLS),
    "call_response_answer_roundtrip": dict(messages=[
        U, {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_weather", {"city": "Paris"})]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."}, {"role": "user", "content": "Thanks"}], tools=TOOLS),
    "roundtrip_thinking_preserved": dict(messages=[
        U, {"role": "assistant", "content": None, "reasoning_content": "Let me call.",
            "tool_calls": [call("c1", "get_weather", {"city": "Paris"})]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny.", "reasoning": "Answer now."},
        {"role": "user", "content": "Thanks"}], tools=TOOLS,
        kwargs={"enable_thinking": True, "preserve_thinking": True}),
    "tool_response_parts_with_image": dict(messages=[
        U, {"role": "assistant", "content": "", "tool_calls": [call("c1", "get_weather", {"city": "Paris"})]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "see map"},
                                                           {"type": "image", "url": "x"}]}], tools=TOOLS),
    "tool_response_mapping": dict(messages=[
        U, {"role": "assistant", "content": "", "tool_calls": [call("c1", "get_weather", {"city": "Paris"})],
            "tool_responses": [{"name": "get_weather", "response": {"temp": 15, "ok": True, "rain": None}}]}],
        tools=TOOLS),
    "string_arguments_raise": dict(messages=[U, {"role": "assistant", "content": "",
                                                 "tool_calls": [call("c1", "get_weather", "{\"city\": \"Paris\"}")]}],
                                   tools=TOOLS),
    "image_parts": dict(messages=[{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Describe."},
                                                               {"type": "image_url", "image_url": {"url": "u"}},
                                                               {"type": "audio"}, {"type": "video"}]}]),
    "system_parts": dict(messages=[{"role": "system", "content": [{"type": "text", "text": " part one "},
                                                                  {"type": "text", "text": "part two"}]},
                                   {"role": "user", "content": "Hi"}]),
    "assistant_history_with_thought": dict(messages=[
        {"role": "user", "content": "Q1"}, {"role": "assistant", "content": "<|channel>thought\nxx<channel|>A1"},
        {"role": "user", "content": "Q2"}]),
    "assistant_reasoning_after_last_user": dict(messages=[
        {"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1", "reasoning": "old thought"},
        {"role": "user", "content": "Q2"}, {"role": "assistant", "content": "partial", "reasoning": "new thought"}],
        kwargs={"enable_thinking": True}, add_generation_prompt=False),
    "consecutive_assistants": dict(messages=[
        {"role": "user", "content": "Q"}, {"role": "assistant", "content": "part 1"},
        {"role": "assistant", "content": "part 2"}]),
}

EXTRA_CASES = {
    "chatml_tools.jinja": {
        "chatml_plain": dict(messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}]),
        "chatml_tools": dict(messages=[{"role": "user", "content": "Weather?"},
                                       {"role": "assistant", "content": "", "tool_calls": [call("c1", "get_weather", TYPED_ARGS)]},
                                       {"role": "tool", "content": "sunny"}, {"role": "tool", "content": "warm"}],
                             tools=TOOLS),
    },
    "alternating_roles.jinja": {
        "inst_ok": dict(messages=[{"role": "system", "content": " Sys "}, {"role": "user", "content": "Hi"},
                                  {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Bye"}]),
        "inst_bad_roles": dict(messages=[{"role": "user", "content": "Hi"}, {"role": "user", "content": "again"}]),
    },
    "kitchen_sink.jinja": {
        "kitchen_sink": dict(messages=[{"role": "system", "content": "sys"},
                                       {"role": "user", "content": " line1\nline2 "},
                                       {"role": "assistant", "content": "ok"}],
                             kwargs={"data": {"k": "v", "B": 2, "a": [1, 2.5, None, True], "u": "\u00e9\u4e2d\"\\"},
                                     "users": [{"name": "bo", "admin": True}, {"name": "al", "admin": False},
                                               {"name": "Cy", "admin": True}]}),
    },
}


def render(env, source: str, case: dict) -> dict:
    variables = dict(SPECIAL_TOKENS)
    variables.update(case.get("kwargs", {}))
    try:
        out = env.from_string(source).render(
            messages=copy.deepcopy(case["messages"]), tools=copy.deepcopy(case.get("tools")),
            documents=None, add_generation_prompt=case.get("add_generation_prompt", True), **variables)
        return {"expected": out}
    except RaisedByTemplate as e:
        return {"error": str(e), "raised": True}
    except jinja2.TemplateError as e:
        return {"error": f"{type(e).__name__}: {e}", "raised": False}


def write_case(name: str, template: str, case: dict, result: dict) -> None:
    data = {"template": template, "messages": case["messages"], "tools": case.get("tools"),
            "kwargs": case.get("kwargs", {}),
            "add_generation_prompt": case.get("add_generation_prompt", True)}
    data.update(result)
    (OUT / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    env = make_env()
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    count = 0
    for template in sorted(TEMPLATES.glob("*.jinja")):
        source = template.read_text(encoding="utf-8")
        short = template.stem.replace("gemma4_", "").replace("_chat_template", "")
        for name, case in GEMMA_CASES.items():
            write_case(f"{short}__{name}", template.name, case, render(env, source, case))
            count += 1
    for template, cases in EXTRA_CASES.items():
        source = (TEMPLATES / "extra" / template).read_text(encoding="utf-8")
        for name, case in cases.items():
            write_case(name, "extra/" + template, case, render(env, source, case))
            count += 1
    # The CLI test's case as plain files (seatrt template render --messages/--tools/--kwargs).
    cli = OUT / "cli"
    cli.mkdir(exist_ok=True)
    case = GEMMA_CASES["tool_response_thinking"]
    (cli / "messages.json").write_text(json.dumps(case["messages"], indent=1) + "\n")
    (cli / "tools.json").write_text(json.dumps(case["tools"], indent=1) + "\n")
    (cli / "kwargs.json").write_text(json.dumps(case["kwargs"]) + "\n")
    source = (TEMPLATES / "gemma4_chat_template.jinja").read_text(encoding="utf-8")
    (cli / "expected.txt").write_text(render(env, source, case)["expected"], encoding="utf-8")
    print(f"wrote {count} cases to {OUT}")


if __name__ == "__main__":
    main()
