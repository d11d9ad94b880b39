"""`seatrt verify` passes on the demo seat (configs/demo.toml: the tiny
Gemma-4 fixture model on the CPU provider), served from the seat file itself
with only its port, plugin path and file paths rewritten for the test.

The demo model has random weights, so it never chooses a tool by itself:
the auto tool-call check runs with --allow-prose-tool-answer (a clean prose
answer is a warning there, leaked markup or a broken call still fails),
while the forced tool call must parse and match the schema.

A json_schema answer on the demo seat must also end where its JSON ends: the
fixture's generation_config names the test tokenizer's <eos>, <turn|> and
<|tool_response> (the release's [1, 106, 50] are other tokens there, and the
answer used to run on through special tokens), and the value must keep the
schema's bounds (checked by Python's jsonschema)."""

import json
import os
import subprocess
import unittest

import jsonschema

from seat_harness import API_KEY, DemoSeat, build_dir


class DemoVerifyTest(unittest.TestCase):
    def test_verify_passes_on_the_demo_seat(self):
        with DemoSeat() as seat:
            env = dict(os.environ, SEATRT_API_KEY=API_KEY)
            r = subprocess.run([os.path.join(build_dir(), "bin", "seatrt"), "verify", seat.base_url, "demo",
                                "--allow-prose-tool-answer"],
                               capture_output=True, text=True, env=env, timeout=240)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr + seat.read_log())
            self.assertIn("PASS tool-call-forced", r.stdout)
            self.assertIn("PASS finite-logprobs", r.stdout)
            self.assertIn("all checks passed", r.stdout)

    def test_a_json_schema_answer_stops_at_its_end_and_keeps_its_bounds(self):
        schema = {"type": "object", "additionalProperties": False, "required": ["ok", "n", "score"],
                  "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": 0, "maximum": 9},
                                 "score": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}}}
        with DemoSeat() as seat:
            client = seat.client()
            for seed in range(6):
                r = client.chat.completions.create(
                    model="demo", max_tokens=200, temperature=1.0, seed=seed, logprobs=True,
                    messages=[{"role": "user", "content": "give json"}],
                    response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}})
                choice = r.choices[0]
                content = choice.message.content
                jsonschema.validate(json.loads(content), schema)
                self.assertEqual(choice.finish_reason, "stop")
                tokens = [t.token for t in choice.logprobs.content]
                # Every generated token is part of the answer but the stop
                # token, which is counted and listed last (as vLLM does).
                self.assertIn(tokens[-1], ("<eos>", "<turn|>", "<|tool_response>"))
                self.assertEqual("".join(tokens[:-1]), content)
                self.assertEqual(r.usage.completion_tokens, len(tokens), tokens)

    def test_parallel_tool_calls_false_gives_one_call(self):
        tools = [{"type": "function", "function": {"name": "f", "parameters": {
                     "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}},
                 {"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}}]
        with DemoSeat() as seat:
            client = seat.client()
            def calls(seed, parallel):
                r = client.chat.completions.create(
                    model="demo", max_tokens=120, temperature=1.0, seed=seed, tools=tools,
                    tool_choice="required", parallel_tool_calls=parallel,
                    messages=[{"role": "user", "content": "call something"}])
                return [c.function.name for c in r.choices[0].message.tool_calls or []]
            # The control: with parallel calls allowed this random model
            # writes several for some seed; the same seeds give one call
            # each when they are not allowed.
            several = [seed for seed in range(60) if len(calls(seed, True)) > 1]
            self.assertTrue(several, "no seed of 60 gave several calls: the control does not control")
            for seed in several[:4] + list(range(8)):
                self.assertEqual(len(calls(seed, False)), 1, seed)
            status, text, _ = seat.post("/v1/chat/completions", {
                "model": "demo", "max_tokens": 4, "messages": [{"role": "user", "content": "x"}],
                "tools": tools, "parallel_tool_calls": "no"})
            self.assertEqual(status, 400, text)
            self.assertIn("parallel_tool_calls", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
