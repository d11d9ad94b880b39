"""Requests that once crashed the server or answered 500 get a 400 naming
the problem, and the server keeps serving (found by a randomized sweep of
the demo seat): bytes that are not UTF-8, nesting deep enough to overflow a
recursive consumer, numbers beyond a double, values that pass as a double
but not as the float the sampler takes, token ids beyond int32, wrong types
and template refusals on /tokenize, a tool schema with an empty type list.
A later sweep: chat_template_kwargs replacing the validated messages or
tools, integers beyond int64 read as negative ones, n above max_queue
answered 429 forever.  Another: a schema whose $ref chain loops without
passing through an object or array (it overflowed the parser plugin's stack).
Run: python3 test_bad_requests.py (SEATRT_BUILD_DIR names the build tree)."""

import json
import unittest

from seat_harness import Seat, SharedSeatTest

MODEL = "scripted"


class BadRequestsTest(SharedSeatTest):
    def assert_400(self, path, body=None, raw=None, contains=""):
        status, text, _ = self.seat.post(path, body, raw=raw)
        self.assertEqual(status, 400, text)
        error = json.loads(text)["error"]
        self.assertEqual(error["code"], 400)
        self.assertIn(contains, error["message"])
        # The server is alive and still answers a normal request.
        self.assertIsNone(self.seat.proc.poll(), self.seat.read_log())
        ok, reply, _ = self.seat.post("/v1/completions", {"model": MODEL, "prompt": "hi", "max_tokens": 2})
        self.assertEqual(ok, 200, reply)
        return error

    def test_body_bytes_that_are_not_utf8(self):
        for path in ("/v1/completions", "/v1/chat/completions", "/tokenize", "/detokenize"):
            self.assert_400(path, raw=b'{"model":"scripted","prompt":"\xc3"}', contains="not valid JSON")
            self.assert_400(path, raw=b"\xff\xfe", contains="not valid JSON")

    def test_nesting_deeper_than_the_limit(self):
        deep = "[" * 20000 + "]" * 20000
        body = '{"model":"scripted","max_tokens":1,"messages":[{"role":"user","content":"hi","x":%s}]}' % deep
        self.assert_400("/v1/chat/completions", raw=body.encode(), contains="deeper than")
        tools = ('{"model":"scripted","max_tokens":1,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":'
                 '"function","function":{"name":"f","parameters":%s}}]}' % deep)
        self.assert_400("/v1/chat/completions", raw=tools.encode(), contains="deeper than")
        # A nesting a real tool schema uses is fine.
        nested = {"type": "object"}
        for _ in range(20):
            nested = {"type": "object", "properties": {"a": nested}}
        status, text, _ = self.seat.post("/v1/chat/completions", {
            "model": MODEL, "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": nested}}]})
        self.assertEqual(status, 200, text)

    def test_number_beyond_a_double(self):
        self.assert_400("/v1/completions", raw=b'{"model":"scripted","prompt":"a","max_tokens":1e400}',
                        contains="not valid JSON")

    def test_parameters_zero_as_a_float_are_refused_before_sampling(self):
        for field in ("repetition_penalty", "top_p"):
            self.assert_400("/v1/completions", {"model": MODEL, "prompt": "hi", "max_tokens": 2, field: 1e-300},
                            contains=field)

    def test_token_ids_beyond_int32(self):
        big = 2 ** 32 + 1
        self.assert_400("/v1/completions", {"model": MODEL, "prompt": [big], "max_tokens": 1}, contains="prompt")
        self.assert_400("/v1/completions", {"model": MODEL, "prompt": "hi", "max_tokens": 1, "stop_token_ids": [big]},
                        contains="stop_token_ids")
        # Within int32 but outside the vocabulary (a sweep found these taken silently).
        for bad in ([99999], [-5], [3, 1 << 30]):
            for path, body in (("/v1/completions", {"prompt": "hi"}),
                               ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})):
                self.assert_400(path, dict(body, model=MODEL, max_tokens=1, stop_token_ids=bad),
                                contains="outside the vocabulary")
        self.assert_400("/detokenize", {"tokens": [2 ** 32 + 2]}, contains="tokens")
        self.assert_400("/detokenize", {"tokens": [2 ** 64 - 1]}, contains="tokens")

    def test_tokenize_wrong_types_and_template_refusals(self):
        self.assert_400("/tokenize", {"prompt": "x", "add_special_tokens": "yes"}, contains="add_special_tokens")
        self.assert_400("/tokenize", {"prompt": "x", "add_special_tokens": None}, contains="add_special_tokens")
        self.assert_400("/tokenize", {"messages": [{"role": "user", "content": "x"}], "add_generation_prompt": 1},
                        contains="add_generation_prompt")
        call = {"type": "function", "function": {"name": "f", "arguments": "not json"}}
        self.assert_400("/tokenize", {"messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]},
                        contains="chat template")

    def test_a_prompt_past_the_context_names_the_prompt_field(self):
        long_ids = [300] * 600  # the harness seat's max_model_len is 512
        error = self.assert_400("/v1/completions", {"model": MODEL, "prompt": long_ids, "max_tokens": 1},
                                contains="maximum context length")
        self.assertEqual(error["param"], "prompt")
        error = self.assert_400("/v1/chat/completions", {"model": MODEL, "max_tokens": 1, "messages": [
            {"role": "user", "content": "word " * 600}]}, contains="maximum context length")
        self.assertEqual(error["param"], "messages")

    def test_tool_schema_with_an_empty_type_list(self):
        self.assert_400("/v1/chat/completions", {
            "model": MODEL, "max_tokens": 4, "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": []}}}],
            "tool_choice": "required"}, contains="type")

    def test_schema_ref_cycles_that_write_nothing(self):
        cycles = [
            ({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}, "#/$defs/a"),
            ({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}, "#/$defs/a"),
            ({"$ref": "#/definitions/a",
              "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}}}, "#/definitions/a"),
            ({"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}],
              "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}]}}}, "#/$defs/a"),
            ({"$ref": "#/$defs/a", "$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}}, "#/$defs/a"),
            ({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "required": ["x"],
              "$defs": {"a": {"$ref": "#/$defs/a"}}}, "#/$defs/a"),
        ]
        messages = [{"role": "user", "content": "x"}]
        for schema, pointer in cycles:
            with self.subTest(schema=schema):
                expected = "$ref chain at '%s' refers back to itself" % pointer
                self.assert_400("/v1/chat/completions", {
                    "model": MODEL, "max_tokens": 4, "messages": messages,
                    "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}},
                    contains=expected)
                if schema.get("type") == "object":
                    for choice in ("required", {"type": "function", "function": {"name": "f"}}):
                        self.assert_400("/v1/chat/completions", {
                            "model": MODEL, "max_tokens": 4, "messages": messages,
                            "tools": [{"type": "function", "function": {"name": "f", "parameters": schema}}],
                            "tool_choice": choice}, contains=expected)
        # Recursion through an object or array is fine (a tree of nodes).
        node = {"type": "object", "properties": {
            "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["name"]}
        tree = {"type": "object", "properties": {"root": {"$ref": "#/$defs/node"}}, "required": ["root"],
                "$defs": {"node": node}}
        status, text, _ = self.seat.post("/v1/chat/completions", {
            "model": MODEL, "max_tokens": 4, "messages": messages,
            "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": tree}}})
        self.assertEqual(status, 200, text)
        status, text, _ = self.seat.post("/v1/chat/completions", {
            "model": MODEL, "max_tokens": 4, "messages": messages,
            "tools": [{"type": "function", "function": {"name": "f", "parameters": tree}}], "tool_choice": "required"})
        self.assertEqual(status, 200, text)


class TemplateVariablesAndIntegersTest(SharedSeatTest):
    def test_chat_template_kwargs_cannot_replace_what_the_server_validated(self):
        # A request's own messages and tools are checked (roles, parts, tool
        # names) before rendering; kwargs of the same names would replace them.
        bad_messages = [{"role": "bogus", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]
        for key, value in (("messages", bad_messages), ("messages", []),
                           ("tools", [{"type": "function", "function": {"name": "evil <|tool_call>"}}]),
                           ("add_generation_prompt", False), ("documents", [])):
            status, text, _ = self.seat.post("/v1/chat/completions", {
                "model": MODEL, "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}],
                "chat_template_kwargs": {key: value}})
            self.assertEqual(status, 400, text)
            self.assertIn("chat_template_kwargs." + key, json.loads(text)["error"]["message"])
        # Other kwargs still reach the template.
        status, text, _ = self.seat.post("/v1/chat/completions", {
            "model": MODEL, "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}],
            "chat_template_kwargs": {"enable_thinking": False}})
        self.assertEqual(status, 200, text)

    def test_integers_beyond_int64_are_refused_not_wrapped(self):
        # 2^64 - 1 once read as -1 (top-k off) and 2^63 as -2^63.
        for field, value in (("top_k", 18446744073709551615), ("max_tokens", 9223372036854775808),
                             ("logprobs", 18446744073709551615)):
            status, text, _ = self.seat.post("/v1/completions", {"model": MODEL, "prompt": "hi", field: value})
            self.assertEqual(status, 400, text)
            message = json.loads(text)["error"]["message"]
            self.assertIn(field, message)
            self.assertIn(str(value), message)
            self.assertNotIn("got -", message)


class ChoicesBeyondTheQueueTest(unittest.TestCase):
    def test_n_above_max_queue_is_a_400_not_a_429_forever(self):
        with Seat(max_queue=2) as seat:
            status, text, _ = seat.post("/v1/completions", {"model": MODEL, "prompt": "hi", "max_tokens": 2, "n": 3})
            self.assertEqual(status, 400, text)
            message = json.loads(text)["error"]["message"]
            self.assertIn("'n' (3)", message)
            self.assertIn("server.max_queue = 2", message)
            status, text, _ = seat.post("/v1/completions", {"model": MODEL, "prompt": "hi", "max_tokens": 2, "n": 2})
            self.assertEqual(status, 200, text)


class SeatWithoutParsersTest(unittest.TestCase):
    # Tools and response formats are the tool parser plugin's to serve: a
    # seat without one refuses them rather than answer as if none were sent.
    def test_tools_and_formats_are_refused_not_ignored(self):
        tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        msgs = [{"role": "user", "content": "hi"}]
        with Seat(tool_parser=None, reasoning_parser=None) as seat:
            for extra, param in [({"tools": [tool]}, "tools"),
                                 ({"tools": [tool], "tool_choice": "required"}, "tools"),
                                 ({"response_format": {"type": "json_object"}}, "response_format")]:
                status, text, _ = seat.post("/v1/chat/completions", dict({"model": MODEL, "messages": msgs,
                                                                          "max_tokens": 2}, **extra))
                self.assertEqual(status, 400, (extra, text))
                error = json.loads(text)["error"]
                self.assertEqual(error["param"], param)
                self.assertIn("no tool parser", error["message"])
            for extra in ({"tools": [tool], "tool_choice": "none"}, {"response_format": {"type": "text"}}, {}):
                status, text, _ = seat.post("/v1/chat/completions", dict({"model": MODEL, "messages": msgs,
                                                                          "max_tokens": 2}, **extra))
                self.assertEqual(status, 200, (extra, text))


if __name__ == "__main__":
    unittest.main(verbosity=2)
