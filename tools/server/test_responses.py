"""POST /v1/responses (OpenAI's Responses API, stateless) on the scripted seat.

The oracle for the shapes is the official openai client: every body must validate as its
`Response` model and every stream event as its `ResponseStreamEvent` union (pydantic, strictly), and
its stream helper must assemble the same response the non-streamed request returns.  The oracle for
the prompt is the chat endpoint: the scripted model's free-running text is a hash of the whole
context, so a Responses input gives the same answer as the chat messages it stands for only if both
render the very same prompt (a control shows a one-word change does change the answer)."""

import json
import unittest

import jsonschema
import openai.types.responses as R
from pydantic import TypeAdapter

from seat_harness import SCRIPTS, Seat, SharedSeatTest

MODEL = "scripted"
WEATHER = {"type": "function", "name": "get_weather", "description": "Get the weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                          "required": ["city"]}}
CHAT_WEATHER = {"type": "function", "function": {k: v for k, v in WEATHER.items() if k != "type"}}
EVENTS = TypeAdapter(R.ResponseStreamEvent)


def sse_events(text):
    """(event name, data object) of each SSE block of a raw stream body."""
    out = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name, data = None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data = line[len("data: "):]
        out.append((name, json.loads(data)))
    return out


class ResponsesTest(SharedSeatTest):
    def respond(self, **kw):
        status, text, _ = self.seat.post("/v1/responses", dict({"model": MODEL, "temperature": 0}, **kw))
        self.assertEqual(status, 200, text)
        body = json.loads(text)
        R.Response.model_validate(body)  # raises on any shape the client does not know
        return body

    def chat_text(self, messages, **kw):
        r = self.client.chat.completions.create(model=MODEL, messages=messages, temperature=0, **kw)
        return r.choices[0].message.content

    @staticmethod
    def output_text(body):
        return "".join(p["text"] for o in body["output"] if o["type"] == "message" for p in o["content"])

    def test_text_answer_and_usage(self):
        body = self.respond(input="Please HELLO_PROSE now", max_output_tokens=64)
        self.assertEqual(body["status"], "completed")
        self.assertEqual(self.output_text(body), SCRIPTS["HELLO_PROSE"])
        self.assertTrue(body["id"].startswith("resp_"))
        chat = self.client.chat.completions.create(model=MODEL, temperature=0, max_tokens=64,
                                                   messages=[{"role": "user", "content": "Please HELLO_PROSE now"}])
        self.assertEqual(body["usage"]["input_tokens"], chat.usage.prompt_tokens)
        self.assertEqual(body["usage"]["output_tokens"], chat.usage.completion_tokens)
        self.assertEqual(body["usage"]["total_tokens"], chat.usage.total_tokens)
        self.assertEqual(body["max_output_tokens"], 64)  # the request's fields come back
        self.assertFalse(body["store"])
        # The client's own convenience reads it too.
        r = self.client.responses.create(model=MODEL, input="Please HELLO_PROSE now", temperature=0)
        self.assertEqual(r.output_text, SCRIPTS["HELLO_PROSE"])

    def test_input_items_render_the_prompt_the_chat_messages_render(self):
        args = json.dumps({"city": "Paris", "days": 2})
        items = [{"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
                 {"type": "reasoning", "id": "rs_1", "summary": [],
                  "content": [{"type": "reasoning_text", "text": "I should call the tool."}]},
                 {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": args},
                 {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21 C"},
                 {"role": "assistant", "content": [{"type": "output_text", "text": "It is sunny.",
                                                    "annotations": []}]},
                 {"type": "message", "role": "user", "content": "And tomorrow?"}]
        messages = [{"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "reasoning": "I should call the tool.",
                     "tool_calls": [{"id": "call_1", "type": "function",
                                     "function": {"name": "get_weather", "arguments": args}}]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"},
                    {"role": "assistant", "content": "It is sunny."},
                    {"role": "user", "content": "And tomorrow?"}]
        body = self.respond(input=items, instructions="Be brief.", tools=[WEATHER], max_output_tokens=8)
        expected = self.chat_text(messages, tools=[CHAT_WEATHER], max_tokens=8)
        self.assertEqual(self.output_text(body), expected)
        # The control: one word of the instructions changed changes the answer.
        other = self.respond(input=items, instructions="Be short.", tools=[WEATHER], max_output_tokens=8)
        self.assertNotEqual(self.output_text(other), expected)

    def test_reasoning_items_join_their_turn(self):
        # Two thoughts in one assistant turn (before its text, before its
        # call) both reach the prompt, joined by a line break.
        args = json.dumps({"city": "Paris"})
        def items(first):
            return [{"role": "user", "content": "Weather in Paris?"},
                    {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": first}]},
                    {"role": "assistant", "content": "Let me check."},
                    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Call it."}]},
                    {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": args},
                    {"type": "function_call_output", "call_id": "c1", "output": "sunny"}]
        messages = [{"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "content": "Let me check.", "reasoning": "Look it up.\nCall it.",
                     "tool_calls": [{"id": "c1", "type": "function",
                                     "function": {"name": "get_weather", "arguments": args}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]
        # With thinking on, the prompt after a tool's output opens a thought:
        # the answer is reasoning (cut by the token limit), compared as such.
        kw = dict(tools=[WEATHER], max_output_tokens=8, reasoning={"effort": "low"})
        chat = self.client.chat.completions.create(model=MODEL, messages=messages, tools=[CHAT_WEATHER], max_tokens=8,
                                                   temperature=0,
                                                   extra_body={"chat_template_kwargs": {"enable_thinking": True}})
        expected = chat.choices[0].message.model_extra["reasoning"]
        self.assertTrue(expected)

        def thought(body):
            return "".join(c["text"] for o in body["output"] if o["type"] == "reasoning" for c in o["content"])
        self.assertEqual(thought(self.respond(input=items("Look it up."), **kw)), expected)
        # A thought no assistant output follows (a user message next) belongs to no turn: dropped.
        stale = [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "Stale."}]}]
        self.assertEqual(thought(self.respond(input=stale + items("Look it up."), **kw)), expected)
        self.assertNotEqual(thought(self.respond(input=items("Look around."), **kw)), expected)

    def test_a_thought_cut_off_is_an_incomplete_reasoning_item_and_no_answer(self):
        for stream in (False, True):
            with self.subTest(stream=stream):
                body = {"model": MODEL, "temperature": 0, "input": "Please THINK_THEN_ANSWER now",
                        "reasoning": {"effort": "high"}, "max_output_tokens": 5, "stream": stream}
                status, text, _ = self.seat.post("/v1/responses", body)
                self.assertEqual(status, 200, text)
                r = sse_events(text)[-1][1]["response"] if stream else json.loads(text)
                R.Response.model_validate(r)
                self.assertEqual(r["status"], "incomplete")
                self.assertEqual([(o["type"], o["status"]) for o in r["output"]], [("reasoning", "incomplete")])
                self.assertTrue("Let me think.".startswith(r["output"][0]["content"][0]["text"]))
                self.assertEqual(R.Response.model_validate(r).output_text, "")

    def test_null_fields_read_as_absent_and_the_answer_repeats_them_typed(self):
        body = self.respond(input="hi", max_output_tokens=4, tool_choice=None, parallel_tool_calls=None,
                            top_p=None, metadata={"k": "v"}, user="u1",
                            text={"format": {"type": "json_schema", "schema": {"type": "object"}}})
        self.assertEqual(body["tool_choice"], "auto")
        self.assertIs(body["parallel_tool_calls"], True)
        self.assertEqual(body["top_p"], 1.0)
        self.assertEqual(body["metadata"], {"k": "v"})
        self.assertEqual(body["user"], "u1")
        self.assertEqual(body["text"]["format"]["name"], "response")
        # Repeated as checked, not as sent: unknown keys of a tool or a tool_choice are not echoed.
        body = self.respond(input="hi", max_output_tokens=4, tools=[dict(WEATHER, strict=True, extra=1)],
                            tool_choice={"type": "function", "name": "get_weather", "extra": 2})
        self.assertEqual(body["tools"], [dict(WEATHER, strict=True)])
        self.assertEqual(body["tool_choice"], {"type": "function", "name": "get_weather"})
        R.Response.model_validate(body, strict=True)

    def test_stream_events_validate_and_assemble_the_same_response(self):
        status, text, headers = self.seat.post("/v1/responses", {"model": MODEL, "temperature": 0, "stream": True,
                                                                 "input": "Please THINK_THEN_ANSWER now",
                                                                 "reasoning": {"effort": "low"}})
        self.assertEqual(status, 200, text)
        self.assertIn("text/event-stream", headers.get("Content-Type", ""))
        events = sse_events(text)
        for name, data in events:
            self.assertEqual(name, data["type"])
            EVENTS.validate_python(data)
        self.assertEqual([d["sequence_number"] for _, d in events], list(range(len(events))))
        types = [d["type"] for _, d in events]
        self.assertEqual(types[:2], ["response.created", "response.in_progress"])
        self.assertEqual(types[-1], "response.completed")
        self.assertNotIn("[DONE]", text)
        final = events[-1][1]["response"]
        self.assertEqual([o["type"] for o in final["output"]], ["reasoning", "message"])
        self.assertEqual(final["output"][0]["content"][0]["text"], "Let me think.")
        self.assertEqual(self.output_text(final), "The answer is 4.")
        self.assertGreater(final["usage"]["output_tokens_details"]["reasoning_tokens"], 0)
        deltas = "".join(d["delta"] for _, d in events if d["type"] == "response.output_text.delta")
        self.assertEqual(deltas, "The answer is 4.")
        # Item events nest: added, part added, deltas, done, part done, item done, then the next item.
        self.assertEqual([t for t in types if not t.endswith(".delta")][2:],
                         ["response.output_item.added", "response.content_part.added",
                          "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
                          "response.output_item.added", "response.content_part.added",
                          "response.output_text.done", "response.content_part.done", "response.output_item.done",
                          "response.completed"])
        whole = self.respond(input="Please THINK_THEN_ANSWER now", reasoning={"effort": "low"})
        self.assertEqual([o["type"] for o in whole["output"]], ["reasoning", "message"])
        self.assertEqual(self.output_text(whole), self.output_text(final))

    def test_function_calls_streamed_and_whole(self):
        body = self.respond(input="Please WEATHER_PARIS now", tools=[WEATHER])
        calls = [o for o in body["output"] if o["type"] == "function_call"]
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0]["name"], "get_weather")
        self.assertEqual(json.loads(calls[0]["arguments"]), {"city": "Paris", "days": 2})
        self.assertTrue(calls[0]["call_id"])
        self.assertEqual(calls[0]["status"], "completed")
        with self.client.responses.stream(model=MODEL, input="Please WEATHER_PARIS now", tools=[WEATHER],
                                          temperature=0) as stream:
            for _ in stream:
                pass
            final = stream.get_final_response()
        streamed = [o for o in final.output if o.type == "function_call"]
        self.assertEqual([(c.name, json.loads(c.arguments)) for c in streamed],
                         [("get_weather", {"city": "Paris", "days": 2})])
        # A named tool_choice forces the call even without the trigger.
        forced = self.respond(input="hello", tools=[WEATHER], tool_choice={"type": "function", "name": "get_weather"},
                              max_output_tokens=200)
        self.assertEqual([o["name"] for o in forced["output"] if o["type"] == "function_call"], ["get_weather"])

    def test_json_schema_format_and_logprobs(self):
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
                  "additionalProperties": False}
        body = self.respond(input="give a number", max_output_tokens=200,
                            text={"format": {"type": "json_schema", "name": "num", "schema": schema, "strict": True}},
                            include=["message.output_text.logprobs"], top_logprobs=2)
        jsonschema.validate(json.loads(self.output_text(body)), schema)
        self.assertEqual(body["text"]["format"]["type"], "json_schema")
        part = body["output"][-1]["content"][0]
        self.assertGreater(len(part["logprobs"]), 0)
        for lp in part["logprobs"]:
            self.assertEqual(len(lp["top_logprobs"]), 2)
            self.assertLessEqual(lp["logprob"], 0.0)

    def test_the_message_logprobs_are_its_own_tokens(self):
        # The marker that closes the thought (<channel|>) is no token of the answer's text.
        body = self.respond(input="Please THINK_THEN_ANSWER now", reasoning={"effort": "high"},
                            include=["message.output_text.logprobs"])
        part = body["output"][-1]["content"][0]
        self.assertEqual(part["text"], "The answer is 4.")
        tokens = [lp["token"] for lp in part["logprobs"]]
        self.assertEqual("".join(tokens[:-1]), "The answer is 4.")  # then the end token
        self.assertEqual(tokens[-1], "<turn|>")

    def test_a_cut_answer_is_incomplete(self):
        body = self.respond(input="Please HELLO_PROSE now", max_output_tokens=3)
        self.assertEqual(body["status"], "incomplete")
        self.assertEqual(body["incomplete_details"], {"reason": "max_output_tokens"})
        self.assertEqual(body["output"][-1]["status"], "incomplete")
        self.assertEqual(body["usage"]["output_tokens"], 3)

    def test_what_is_not_served_is_a_400_naming_the_field(self):
        cases = [({"previous_response_id": "resp_x"}, "previous_response_id"),
                 ({"conversation": "conv_1"}, "conversation"),
                 ({"background": True}, "background"),
                 ({"tools": [{"type": "web_search"}]}, "tools[0].type"),
                 ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "http://x"}]}]},
                  "input[0].content[0].type"),
                 ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0].type"),
                 ({"truncation": "auto"}, "truncation"),
                 ({"reasoning": {"effort": "extreme"}}, "reasoning.effort"),
                 ({"text": {"format": {"type": "xml"}}}, "text.format.type"),
                 ({"frobnicate": 1}, "frobnicate"),
                 ({"max_output_tokens": 0}, "max_output_tokens"),
                 ({"max_output_tokens": "9"}, "max_output_tokens"),
                 ({"input": None}, "input"),
                 ({"input": [{"role": "user", "content": "hi"}, {"type": "reasoning", "summary": ["abc"]}]},
                  "input[1].summary[0]"),
                 ({"metadata": {"a": 1}}, "metadata.a"),
                 ({"metadata": "x"}, "metadata"),
                 ({"user": 5}, "user"),
                 ({"tools": [dict(WEATHER, description=5)]}, "tools[0].description"),
                 ({"tools": [dict(WEATHER, parameters="x")]}, "tools[0].parameters"),
                 ({"tools": [dict(WEATHER, strict="yes")]}, "tools[0].strict"),
                 ({"text": {"format": {"type": "json_schema", "name": "x", "schema": True}}}, "text.format.schema"),
                 ({"text": {"format": {"type": "json_schema", "name": "x", "schema": {}, "strict": "yes"}}},
                  "text.format.strict"),
                 ({"text": {"format": {"type": "json_schema", "name": "x", "schema": {}, "description": 5}}},
                  "text.format.description")]
        for extra, param in cases:
            with self.subTest(param=param):
                body = dict({"model": MODEL, "input": "hi"}, **extra)
                if extra.get("input", "x") is None:
                    del body["input"]
                status, text, _ = self.seat.post("/v1/responses", body)
                self.assertEqual(status, 400, text)
                self.assertEqual(json.loads(text)["error"]["param"], param, text)
        status, text, _ = self.seat.post("/v1/responses", {"model": "nope", "input": "hi"})
        self.assertEqual(status, 404, text)
        status, _ = self.seat.get("/v1/responses")
        self.assertEqual(status, 405)
        self.assertIn('seatrt_requests_total{endpoint="responses",status="400"}', self.seat.get("/metrics")[1])


class ResponsesFailureTest(unittest.TestCase):
    def test_a_failure_mid_stream_is_a_failed_response(self):
        # Its own seat: non-finite logits leave a seat not ready for good.
        with Seat() as seat:
            status, text, _ = seat.post("/v1/responses", {"model": MODEL, "temperature": 0, "stream": True,
                                                          "input": "Please NAN_MIDWAY now"})
            self.assertEqual(status, 200, text)
            events = sse_events(text)
            for _, data in events:
                EVENTS.validate_python(data)
            last = events[-1][1]
            self.assertEqual(last["type"], "response.failed")
            self.assertEqual(last["response"]["status"], "failed")
            self.assertIn("non-finite", last["response"]["error"]["message"])
            # Its text so far came first, as output_text deltas.
            self.assertTrue(any(d["type"] == "response.output_text.delta" for _, d in events))
            status, text, _ = seat.post("/v1/responses", {"model": MODEL, "input": "Please NAN_MIDWAY now"})
            self.assertEqual(status, 500, text)
            self.assertIn("non-finite", json.loads(text)["error"]["message"])

    def test_a_stream_past_its_timeout_ends_in_a_failed_response_the_client_reads(self):
        with Seat(request_timeout_s=0.05) as seat:
            status, text, _ = seat.post("/v1/responses", {"model": MODEL, "input": "hi", "stream": True,
                                                          "max_output_tokens": 400})
            self.assertEqual(status, 200, text)
            last = sse_events(text)[-1][1]
            EVENTS.validate_python(last)
            self.assertEqual(last["type"], "response.failed")
            self.assertEqual(last["response"]["error"]["code"], "server_error")
            self.assertIn("request_timeout_s", last["response"]["error"]["message"])


if __name__ == "__main__":
    unittest.main()
