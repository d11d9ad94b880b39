"""vLLM's `continue_final_message` (assistant prefill) on the scripted seat.

The prompts must be transformers' own: tests/fixtures/templates/continue/cases.json holds what
transformers' apply_chat_template(continue_final_message=True) renders for each case
(tools/text/render_continue_oracles.py), and /tokenize must return those prompts' ids as Hugging
Face `tokenizers` encodes them.  A chat request then continues the final message: the scripted
model replays the rest of its script after the prefilled part, so the answer is exactly what the
script has after the prefix (not the prefix again, not a new turn).  Conflicting or unservable
requests are 400s that name the field."""

import json
import os
import unittest

from seat_harness import ROOT, SCRIPTS, SharedSeatTest, ids

MODEL = "scripted"
CASES = os.path.join(ROOT, "tests/fixtures/templates/continue/cases.json")


class ContinueFinalMessageTest(SharedSeatTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(CASES) as f:
            cls.cases = json.load(f)["cases"]

    def tokenize(self, case, **extra):
        body = {"model": MODEL, "messages": case["messages"], "chat_template_kwargs": case["kwargs"],
                "add_generation_prompt": False, "continue_final_message": True}
        if case.get("tools"):
            body["tools"] = case["tools"]
        body.update(extra)
        return self.seat.post("/tokenize", body)

    def test_prompts_are_transformers_prompts(self):
        checked = 0
        for case in self.cases:
            with self.subTest(case=case["name"]):
                status, text, _ = self.tokenize(case)
                if "error" in case:  # transformers refused: so must the server, for the same reason
                    self.assertEqual(status, 400, text)
                    ours = json.loads(text)["error"]["message"]
                    if "has no \"content\"" in case["error"]:
                        self.assertIn("no content", ours)
                    else:
                        self.assertIn("does not appear", case["error"])
                        self.assertIn("does not render the final message", ours)
                    continue
                self.assertEqual(status, 200, text)
                self.assertEqual(json.loads(text)["tokens"], ids(case["expected"]))
                checked += 1
        self.assertGreaterEqual(checked, 10)

    def test_the_answer_continues_the_prefilled_text(self):
        script = SCRIPTS["HELLO_PROSE"]
        prefix = "Hello there,"
        self.assertTrue(ids(script)[:len(ids(prefix))] == ids(prefix))  # the script's own first tokens
        r = self.continued_chat(prefix)
        self.assertEqual(r.choices[0].message.content, script[len(prefix):])
        self.assertEqual(r.choices[0].finish_reason, "stop")
        # Streaming gives the same continuation.
        stream = self.continued_chat(prefix, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        self.assertEqual(text, script[len(prefix):])

    def test_without_continuation_the_same_messages_start_a_new_turn(self):
        # The control: the same messages with a generation prompt are not a
        # continuation of the script's text.
        r = self.client.chat.completions.create(
            model=MODEL, max_tokens=16, temperature=0,
            messages=[{"role": "user", "content": "Please HELLO_PROSE now"},
                      {"role": "assistant", "content": "Hello there,"}])
        self.assertNotEqual(r.choices[0].message.content, SCRIPTS["HELLO_PROSE"][len("Hello there,"):])

    def test_echo_starts_the_answer_with_the_final_message(self):
        # vLLM's chat echo: with a continuation the whole text comes back.
        script = SCRIPTS["HELLO_PROSE"]
        r = self.continued_chat("Hello there,", extra_body={"add_generation_prompt": False,
                                                            "continue_final_message": True, "echo": True})
        self.assertEqual(r.choices[0].message.content, script)
        self.assertEqual(r.usage.completion_tokens, len(ids(script[len("Hello there,"):])) + 1)  # no echoed token
        stream = self.continued_chat("Hello there,", stream=True,
                                     extra_body={"add_generation_prompt": False, "continue_final_message": True,
                                                 "echo": True})
        self.assertEqual("".join(c.choices[0].delta.content or "" for c in stream if c.choices), script)
        # With a generation prompt only an assistant's final message is echoed.
        r = self.client.chat.completions.create(
            model=MODEL, max_tokens=64, temperature=0, extra_body={"echo": True},
            messages=[{"role": "user", "content": "Please HELLO_PROSE now"}])
        self.assertEqual(r.choices[0].message.content, script)
        r = self.client.chat.completions.create(
            model=MODEL, max_tokens=4, temperature=0, extra_body={"echo": True},
            messages=[{"role": "user", "content": "Hi"},
                      {"role": "assistant", "content": [{"type": "text", "text": "One"},
                                                        {"type": "text", "text": "Two"}]}])
        self.assertTrue(r.choices[0].message.content.startswith("One\nTwo"), r.choices[0].message.content)
        self.assertGreater(len(r.choices[0].message.content), len("One\nTwo"))

    def continued_chat(self, prefix, extra_body=None, **kw):
        messages = [{"role": "user", "content": "Please HELLO_PROSE now"},
                    {"role": "assistant", "content": prefix}]
        return self.client.chat.completions.create(
            model=MODEL, messages=messages, max_tokens=64, temperature=0,
            extra_body=extra_body or {"add_generation_prompt": False, "continue_final_message": True}, **kw)

    def test_conflicts_are_400s_naming_the_field(self):
        case = next(c for c in self.cases if c["name"] == "assistant_prefix")
        status, text, _ = self.tokenize(case, add_generation_prompt=True)
        self.assertEqual(status, 400, text)
        self.assertEqual(json.loads(text)["error"]["param"], "continue_final_message")
        # add_generation_prompt defaults to true: leaving it out conflicts too.
        body = {"model": MODEL, "messages": case["messages"], "continue_final_message": True}
        status, text, _ = self.seat.post("/v1/chat/completions", body)
        self.assertEqual(status, 400, text)
        self.assertEqual(json.loads(text)["error"]["param"], "continue_final_message")
        base = dict(body, add_generation_prompt=False)
        for extra, param in (({"response_format": {"type": "json_object"}}, "response_format"),
                             ({"tools": [{"type": "function", "function": {"name": "f"}}],
                               "tool_choice": "required"}, "tool_choice")):
            status, text, _ = self.seat.post("/v1/chat/completions", dict(base, **extra))
            self.assertEqual(status, 400, text)
            self.assertEqual(json.loads(text)["error"]["param"], param)
        status, text, _ = self.seat.post("/v1/chat/completions", dict(base, continue_final_message="yes"))
        self.assertEqual(status, 400, text)
        self.assertEqual(json.loads(text)["error"]["param"], "continue_final_message")

if __name__ == "__main__":
    unittest.main()
