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


# Small templates for the engine's semantics (whitespace control, Python printing, scoping, ...).
SNIPPETS = [
    ("a\n  {% if true %}\n  b\n  {% endif %}\nc", {}),
    ("a  {%- if true -%}  b  {%- endif -%}  c", {}),
    ("a\n  {%+ if true %}b{% endif %}\n", {}),
    ("x {# comment #}\n  {# own line #}\ny", {}),
    ("{{ 'a' }}\n{{ 'b' }}\n", {}),
    ("{% for x in [1,2] %}\n{{ x }}\n{% endfor %}\n", {}),
    ("line\r\nbreaks\rmixed\n", {}),
    ("{{ 1 }}{{ -1 }}{{ 1.0 }}{{ -0.0 }}{{ 1e16 }}{{ 1e15 }}{{ 123456789.123 }}{{ 0.0001 }}{{ 0.00001 }}", {}),
    ("{{ x }} {{ y }} {{ z }} {{ w }}", {"x": 1e-7, "y": 3.14159, "z": 2.5e300, "w": 100.0}),
    ("{{ f }} {{ f | tojson }}", {"f": [0.1, 1.0, 1e100, -2.5e-8, 9007199254740993, -9223372036854775808]}),
    ("{{ s | tojson }}", {"s": "quote\" backslash\\ ctrl\u0001\u001f tab\t nl\n \u2028 é 😀 </script>"}),
    ("{{ s | tojson(indent=4) }}|{{ e | tojson(indent=2) }}|{{ l | tojson(indent=2) }}", {"s": {"a": {"b": [1, {}]}}, "e": {}, "l": []}),
    ("{{ d | tojson(separators=(',', ':')) }} {{ d | tojson(sort_keys=true) }}", {"d": {"b": 1, "a": [1, 2]}}),
    ("{{ d | tojson(ensure_ascii=true) }}", {"d": {"k": "é中😀"}}),
    ("{{ s }}|{{ [s] }}", {"s": "a'b\"c\\d\ne\u0007\u00a0\u200b"}),
    ("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}", {}),
    ("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}", {}),
    ("{% macro m(a, b=a + 1) %}{{ a }},{{ b }},{{ varargs }},{{ kwargs }}{% endmacro %}{{ m(1) }}|{{ m(1, 5) }}|{{ m(1, 2, 3, k=4) }}", {}),
    ("{% macro outer() %}[{{ caller() }}]{% endmacro %}{% call outer() %}inside{% endcall %}", {}),
    ("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(5) }}", {}),
    ("{{ missing }}|{{ missing | default('d') }}|{{ d.missing }}|{{ d['missing'] | default(1) }}|{{ none_v.attr }}", {"d": {}, "none_v": None}),
    ("{% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}", {"d": {"items": "shadowed", "x": 1}}),
    ("{{ d['items'] }} {{ d.get('items') }}", {"d": {"items": "value"}}),
    ("{{ [1, 2, 3][-1] }} {{ [1, 2, 3][5] is defined }} {{ 'héllo'[1] }} {{ 'abc'[-2:] }} {{ [1,2,3,4][1:-1] }} {{ [1,2,3][::-1] }}", {}),
    ("{{ 1 if true }}|{{ 1 if false }}|{{ 'a' if 0 else 'b' if '' else 'c' }}", {}),
    ("{{ true and 'x' }} {{ 0 or 'y' }} {{ none or [] }} {{ not none }} {{ 1 and 0 }}", {}),
    ("{{ 3 > 2 > 1 }} {{ 1 < 2 > 3 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == true }} {{ 0 == false }} {{ 1 != 1.0 }}", {}),
    ("{{ 10 // 3 }} {{ 10 % -3 }} {{ -10 // 3 }} {{ 10.5 // 2 }} {{ -10.5 % 3 }} {{ 2 ** -1 }} {{ 2 ** 0.5 }} {{ 7 / 7 }}", {}),
    ("{{ true + 1 }} {{ 1 + 2.0 }} {{ 'ab' * 2 }} {{ 2 * [0] }} {{ -true }}", {}),
    ("{% for a, b in [[1, 2], (3, 4)] %}{{ a }}{{ b }}{% endfor %} {% for c in 'hé' %}[{{ c }}]{% endfor %} {% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}", {}),
    ("{% for x in [] %}a{% else %}empty{% endfor %} {% for x in [1, 2, 3] if x > 1 %}{{ loop.index }}:{{ x }}{{ loop.length }} {% endfor %}", {}),
    ("{% for x in [1, 2, 3] %}{{ loop.previtem | default('-') }}{{ x }}{{ loop.nextitem | default('-') }} {% endfor %}", {}),
    ("{% for x in [1, 2] %}{% for y in 'ab' %}{{ loop.index }}{{ y }}{% endfor %}{{ loop.index }}{% endfor %}", {}),
    ("{{ 'Hello World' | wordcount }} {{ 'a b' | center(9) }}| {{ 'x\n\ny' | indent(2, true) }} {{ 'x\n\ny' | indent(2, blank=true) }}", {}),
    ("{{ ['b', 'a', 'C'] | sort(case_sensitive=true) }} {{ {'b': 1, 'A': 2, 'c': 0} | dictsort(by='value') }} {{ {'b': 1, 'A': 2} | dictsort(true) }} {{ {'b': 1, 'a': 2} | dictsort(reverse=true) }}", {}),
    ("{{ [{'a': {'b': 2}}, {'a': {'b': 1}}] | sort(attribute='a.b') | map(attribute='a.b') | list }} {{ [[1, 2], [3]] | map('length') | list }} {{ x | map(attribute='n', default='?') | list }}", {"x": [{"n": 1}, {}]}),
    ("{{ 'a,b' | replace(',', ';') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'ab' | replace('', '-') }} {{ '  x ' | trim }}|{{ '--x--' | trim('-') }}|", {}),
    ("{{ 'x'.upper() }} {{ 'a b c'.split(' ', 1) }} {{ 'a b c'.rsplit(' ', 1) }} {{ 'ab'.find('b') }} {{ 'ab'.find('z') }} {{ 'aXa'.count('a') }} {{ '-'.join(['a', 'b']) }} {{ 'l1\nl2\r\nl3'.splitlines() }}", {}),
    ("{{ 'abc' is string }} {{ 1 is string }} {{ none is mapping }} {{ [] is iterable }} {{ 1 is iterable }} {{ range is callable }} {{ 4 is even }} {{ 1 is sameas true }} {{ 'x' is in 'xy' }} {{ 2 is gt 1 }} {{ 'abc' is upper }}", {}),
    ("{{ x is defined }} {{ x is undefined }} {{ x is none }} {{ y is none }} {{ y is defined }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0.0 is number }} {{ true is number }} {{ true is integer }}", {"y": None}),
    ("{{ dict(a=1, b=[2]) }} {{ namespace(a=1) }} {{ range(0) | list }} {{ (1,) }} {{ () }}", {}),
    ("{{ [1, 2] | join }} {{ [1, none, true] | join('|') }} {{ [] | first is defined }} {{ 'ab' | list }} {{ {'a': 1} | list }} {{ none | string }} {{ 3 | string | length }}", {}),
    ("{{ 3.7 | int }} {{ '0x1A' | int(0, 16) }} {{ '12abc' | int(7) }} {{ 'nan' | float }} {{ '1e3' | float }} {{ 1 | float }} {{ 2.675 | round(2) }} {{ 3.5 | round }} {{ 4.5 | round }} {{ 1.2 | round(0, 'ceil') }} {{ -1.5 | abs }}", {}),
    ("{{ [3, 1, 2] | max }} {{ ['b', 'A'] | min }} {{ [1.5, 2] | sum }} {{ x | sum(attribute='v') }} {{ [1, 2, 3, 4, 5] | batch(2) | list }} {{ [1, 2, 3] | batch(2, 0) | list }} {{ ['a', 'A', 'b'] | unique | list }}", {"x": [{"v": 1}, {"v": 2}]}),
    ("{{ '%s=%d (%r) %%' | format('k', 3, 'v') }} {{ 'é' | capitalize }} {{ 'ÀÉÎ àéî' | lower }} {{ 'hello wORLD x1y' | title }} {{ 'ß' | length }}", {}),
    ("{% set a, b = [1, 2] %}{{ a }}{{ b }} {% set t = 1, 2 %}{{ t }} {% with x = 5 %}{{ x }}{% endwith %}{{ x is defined }}", {}),
    ("{% set v | upper %}block {{ 1 }}{% endset %}{{ v }} {% filter trim | upper %}  f  {% endfilter %}", {}),
    ("{% raw %}{{ a }}{% if %}{% endraw %} {%- raw -%}  x  {%- endraw -%} y", {}),
    ("{{ \"\\n\\t\\x41\\u00e9\\U0001F600\\'\\\"\\q\" }}", {}),
    ("{{ messages[0]['content'] }}{{ messages | length }}{{ messages[0].content | length }}", {"messages": [{"content": "日本語"}]}),
    ("trailing newline kept? \n", {}),
    ("{% if a %}A{% elif b %}B{% elif c %}C{% else %}D{% endif %}", {"b": 0, "c": [1]}),
    ("{% generation %}gen {{ 1 }}{% endgeneration %}", {}),
    ("{{ 'x' ~ 1 ~ 2.5 ~ [1] }} {{ 1 ~ none }} {{ [1] + [2] }} {{ 'a' + 'b' }}", {}),
    ("{% for i in range(3) %}{{ loop.revindex }}{{ loop.cycle('a', 'b', 'c') }}{{ loop.depth }}{% endfor %}", {}),
]
# Templates jinja2 rejects or that fail while rendering: the engine must fail too.
ERROR_SNIPPETS = [
    ("{% if %}", {}), ("{{ x | nosuchfilter }}", {}), ("{{ x is nosuchtest }}", {}), ("{% for %}", {}),
    ("{% endif %}", {}), ("{% if true %}unterminated", {}), ("{{ 'unterminated }}", {}),
    ("{{ 1 + }}", {}), ("{{ (1 }}", {}), ("{% set %}", {}), ("{% unknowntag %}", {}),
    ("{{ raise_exception('boom') }}", {}), ("{{ x.y }}", {}), ("{{ 1 + 'a' }}", {}), ("{{ 1 / 0 }}", {}),
    ("{% for x in 5 %}{% endfor %}", {}), ("{{ range(200000) | length }}", {}), ("{{ {} | tojson(x) }}", {"x": 1}),
    ("{{ undefined_fn() }}", {}), ("{% set x = 1 %}{% set x.y = 2 %}", {}), ("{{ [1] < 'a' }}", {}),
    ("{% break %}", {}), ("{{ none | dictsort }}", {}), ("{{ 'a' is divisibleby 0 }}", {}),
]


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
    snippets = []
    for source, variables in SNIPPETS + ERROR_SNIPPETS:
        try:
            snippets.append({"template": source, "vars": variables,
                             "expected": env.from_string(source).render(**variables)})
        except RaisedByTemplate as e:
            snippets.append({"template": source, "vars": variables, "error": str(e), "raised": True})
        except Exception as e:  # noqa: BLE001  (any jinja2/Python failure: the engine must fail too)
            snippets.append({"template": source, "vars": variables, "error": f"{type(e).__name__}: {e}",
                             "raised": False})
    rows = [json.dumps(x, ensure_ascii=False) for x in snippets]
    (TEMPLATES / "snippets.json").write_text("[\n" + ",\n".join(rows) + "\n]\n", encoding="utf-8")
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
