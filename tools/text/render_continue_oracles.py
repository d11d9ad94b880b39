#!/usr/bin/env python3
"""Golden prompts for vLLM's `continue_final_message`, rendered by transformers itself.

vLLM renders a chat with transformers' apply_chat_template(continue_final_message=True), so the
oracle is that function's renderer (transformers.utils.chat_template_utils.render_jinja_template),
an implementation independent of seatrt's (runtime/server/chat_continuation.cpp and the C++ jinja
engine).  The template is the one the server tests' seat uses; the special tokens are the test
tokenizer's (tests/fixtures/tokenizer/tokenizer_config.json).

Writes tests/fixtures/templates/continue/cases.json: a list of {"name", "messages", "kwargs",
"expected"} or, where transformers refuses, {"name", "messages", "kwargs", "error"}.  The messages
are what the test sends; they need no preparation (no tool_calls with string arguments).
Run from the repository root (pip install transformers==5.25.0 jinja2):
    python3 tools/text/render_continue_oracles.py
"""

from __future__ import annotations

import json
import pathlib

import transformers
from transformers.utils.chat_template_utils import render_jinja_template

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "tests/fixtures/templates/gemma4_chat_template.jinja"
TOKENIZER_CONFIG = ROOT / "tests/fixtures/tokenizer/tokenizer_config.json"
OUT = ROOT / "tests/fixtures/templates/continue/cases.json"

U = {"role": "user", "content": "Write a haiku about the sea."}
OFF = {"enable_thinking": False}
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                            "parameters": {"type": "object",
                                                           "properties": {"city": {"type": "string"}}}}}

CASES = [
    ("assistant_prefix", [U, {"role": "assistant", "content": "Waves fold"}], OFF),
    # The template trims a model turn's text: transformers then drops the trailing space too.
    ("assistant_trailing_space", [U, {"role": "assistant", "content": "The sea is "}], OFF),
    ("assistant_leading_space", [U, {"role": "assistant", "content": "   Grey water"}], OFF),
    ("assistant_newline_end", [U, {"role": "assistant", "content": "Line one\n"}], OFF),
    ("assistant_parts", [U, {"role": "assistant", "content": [{"type": "text", "text": "Part one."},
                                                               {"type": "text", "text": " Part two"}]}], OFF),
    ("assistant_empty", [U, {"role": "assistant", "content": ""}], OFF),
    ("assistant_unicode", [U, {"role": "assistant", "content": "Caf\u00e9 \u2615 and \u4e2d"}], OFF),
    ("thinking_on", [U, {"role": "assistant", "content": "Sure"}], {"enable_thinking": True}),
    ("assistant_with_reasoning", [U, {"role": "assistant", "reasoning": "Think of waves.",
                                      "content": "Foam"}], {"enable_thinking": True}),
    ("user_final", [{"role": "system", "content": "Complete the user's sentence."},
                    {"role": "user", "content": "The capital of France is"}], OFF),
    ("multi_turn", [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q1"},
                    {"role": "assistant", "content": "A1"}, {"role": "user", "content": "Q2"},
                    {"role": "assistant", "content": "A2 starts"}], OFF),
    ("after_tool_response", [{"role": "user", "content": "Weather in Paris?"},
                             {"role": "assistant", "tool_calls": [
                                 {"id": "c1", "type": "function",
                                  "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                             {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
                             {"role": "assistant", "content": "It is"}], OFF, [WEATHER]),
    # Python's strip() takes Unicode spaces too (NBSP, U+3000, U+2028).
    ("unicode_trailing_spaces", [U, {"role": "assistant", "content": "The sea\u00a0\u3000 "}], OFF),
    ("unicode_leading_space", [U, {"role": "assistant", "content": "\u00a0The sea"}], OFF),
    ("line_separator_end", [U, {"role": "assistant", "content": "The sea\u2028"}], OFF),
    ("no_content", [U, {"role": "assistant", "content": None}], OFF),
    # The template strips a thought from a model turn's text: the text as sent is not in the prompt.
    ("thought_in_final_text", [U, {"role": "assistant", "content": "<|channel>thought\nhidden<channel|>Shown"}],
     OFF),
]


def main() -> None:
    template = TEMPLATE.read_text()
    config = json.loads(TOKENIZER_CONFIG.read_text())
    special = {k: config[k] for k in ("bos_token", "eos_token", "unk_token", "pad_token", "mask_token") if k in config}
    out = []
    for case in CASES:
        name, messages, kwargs = case[:3]
        tools = case[3] if len(case) > 3 else None
        entry = {"name": name, "messages": messages, "kwargs": kwargs, "tools": tools}
        try:
            rendered, _ = render_jinja_template(conversations=[messages], tools=tools, chat_template=template,
                                                continue_final_message=True, add_generation_prompt=False,
                                                **special, **kwargs)
            entry["expected"] = rendered[0]
        except ValueError as e:
            entry["error"] = str(e)
        out.append(entry)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"generator": "transformers " + transformers.__version__, "cases": out},
                              ensure_ascii=False, indent=1) + "\n")
    print("wrote", OUT, len(out), "cases")


if __name__ == "__main__":
    main()
