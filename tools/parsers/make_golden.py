#!/usr/bin/env python3
"""Writes tests/parsers/golden/gemma4_golden.json: the golden cases (model
output token streams, written here by hand as the Gemma-4 tokenizer splits
text: control tokens are single tokens) with the expected OpenAI message and
streamed deltas computed by the independent oracle gemma4_oracle.py.

Run: python3 tools/parsers/make_golden.py > tests/parsers/golden/gemma4_golden.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import gemma4_oracle  # noqa: E402

D = '<|"|>'
TC, TCE = "<|tool_call>", "<tool_call|>"
CH, CHE = "<|channel>", "<channel|>"
TOOLS = ["get_weather", "search", "set_alarm"]
NO_THINK_TAIL = "<|turn>user\nHi<turn|>\n<|turn>model\n<|channel>thought\n<channel|>"
THINK_TAIL = "<|turn>user\nHi<turn|>\n<|turn>model\n"

WEATHER = [TC, "call", ":", "get", "_", "weather", "{", "city", ":", D, "Par", "is", D, ",", "days", ":", "2", "}", TCE]

CASES = [
    {"name": "plain_prose", "tokens": ["Hello", ",", " world", "!"]},
    {"name": "prose_with_thought", "enable_thinking": True, "prompt_tail": THINK_TAIL,
     "tokens": [CH, "thought", "\n", "The user", " greets", " me", ".", CHE, "Hi", " there", "!"]},
    {"name": "one_call", "tokens": WEATHER},
    {"name": "several_calls",
     "tokens": WEATHER + [TC, "call", ":", "search", "{", "query", ":", D, "hotels", " in", " Paris", D, ",",
                          "limit", ":", "5", "}", TCE]},
    {"name": "nested_typed_arguments",
     "tokens": [TC, "call:", "search", "{", "query", ":", D, "x", D, ",", "limit", ":", "10", ",", "exact", ":",
                "true", ",", "ratio", ":", "0", ".", "5", ",", "tags", ":", "[", D, "a", D, ",", D, "b", D, "]", ",",
                "filter", ":", "{", "since", ":", "2020", ",", "lang", ":", "null", ",", "sizes", ":", "[", "1", ",",
                "2", ".", "5", "]", "}", ",", "score", ":", "-", "1", ".", "5", "e", "-", "05", ",", "none", ":",
                "false", "}", TCE]},
    {"name": "strings_with_braces_quotes_newlines_unicode",
     "tokens": [TC, "call:", "search", "{", "query", ":", D, "a {b}", " \"c\"", " \\ d", "\n", "line2", "\t",
                " — ü", " 日本", " 😀", " [x]", ",y:z", D, "}", TCE]},
    {"name": "call_after_thought", "enable_thinking": True, "prompt_tail": THINK_TAIL,
     "tokens": [CH, "thought", "\n", "Need", " the weather", ".", CHE] + WEATHER},
    {"name": "call_inside_thought_without_close", "enable_thinking": True, "prompt_tail": THINK_TAIL,
     "tokens": [CH, "thought", "\n", "Checking", "."] + WEATHER},
    {"name": "content_then_call", "tokens": ["Let", " me", " check", "."] + WEATHER},
    {"name": "content_after_call", "tokens": WEATHER + ["Done", "."]},
    {"name": "cut_off_mid_call", "finish": "length",
     "tokens": [TC, "call", ":", "get_weather", "{", "city", ":", D, "Par"]},
    {"name": "cut_off_mid_bare_value", "finish": "length",
     "tokens": [TC, "call", ":", "get_weather", "{", "city", ":", D, "Oslo", D, ",", "days", ":", "1"]},
    {"name": "cut_off_in_call_head", "finish": "length", "tokens": ["Sure", ".", TC, "call", ":", "get_we"]},
    {"name": "call_closed_with_brackets_open",
     "tokens": [TC, "call:", "get_weather", "{", "city", ":", D, "Oslo", D, ",", "opts", ":", "{", "hourly", ":",
                "true", TCE]},
    {"name": "malformed_head_space", "tokens": [TC, "call", " get_weather", "{", "city", ":", D, "Paris", D, "}", TCE]},
    {"name": "malformed_unknown_tool", "tokens": [TC, "call", ":", "launch", "_rockets", "{", "n", ":", "3", "}", TCE]},
    {"name": "malformed_arguments_junk",
     "tokens": [TC, "call:", "search", "{", "a", ":", "1 b:2", ",", "c", ":", D, "x", D, "y", ",", "d", ":", "}",
                TCE]},
    {"name": "malformed_stray_closers", "tokens": ["A", CHE, "B", TCE, "C", "<turn|>", "D"]},
    {"name": "quoted_keys", "tokens": [TC, "call:", "get_weather", "{", D, "city", D, ":", D, "Rome", D, "}", TCE]},
    {"name": "tool_choice_none_call_is_content", "tool_choice": "none", "tokens": WEATHER},
    {"name": "thought_cut_off_by_length", "finish": "length", "enable_thinking": True, "prompt_tail": THINK_TAIL,
     "tokens": [CH, "thought", "\n", "Let me", " think", " more"]},
    {"name": "prompt_ends_in_open_channel", "enable_thinking": True,
     "prompt_tail": "<|tool_response>response:get_weather{value:" + D + "sunny" + D + "}<tool_response|>" + CH + "thought\n",
     "tokens": ["It", " is", " sunny", ".", CHE, "It is sunny", "."]},
    {"name": "thought_after_tool_response_thinking_off",
     "prompt_tail": "<|tool_response>response:get_weather{value:" + D + "sunny" + D + "}<tool_response|>",
     "tokens": [CH, "thought", "\n", "Done", ".", CHE, "It", " is", " sunny", "."]},
    {"name": "thinking_off_prose_is_content", "prompt_tail": NO_THINK_TAIL,
     "tokens": ["Paris", " is", " the", " capital", "."]},
    {"name": "thinking_on_bare_thought_label", "enable_thinking": True, "prompt_tail": THINK_TAIL,
     "tokens": ["thought", "\n", "hmm", CHE, "Answer", "."]},
    {"name": "named_tool_choice", "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
     "tokens": WEATHER},
    {"name": "delimiter_in_content", "tokens": ["Say ", D, "hi", D, "."]},
]


def main():
    cases = []
    for c in CASES:
        case = {"tools": TOOLS, "tool_choice": "auto", "enable_thinking": False, "prompt_tail": "", "finish": "stop"}
        case.update(c)
        cases.append(gemma4_oracle.run_case(case))
    json.dump(cases, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
