"""The access log: one line per request in the server's log, with the peer,
the method and path (JSON-quoted), the status, the time taken and, for a
generation, its id, token counts, finish reasons and whether it streamed.
The expected values come from the official openai client's view of each
response (its parsed id, usage and finish reasons), not from the server's
log code; a refused request's line carries the error message its body had;
probes (/health, /ready, /metrics) stay out of the info-level log.
Run: python3 test_access_log.py (SEATRT_BUILD_DIR names the build tree)."""

import json
import re
import socket
import time
import unittest

from seat_harness import API_KEY, SharedSeatTest

LINE = re.compile(r'(?P<remote>\S+) (?P<what>"(?:[^"\\]|\\.)*") (?P<status>\d{3}) (?P<ms>\d+\.\d) ms'
                  r'(?: id=(?P<id>\S+) prompt_tokens=(?P<prompt>\d+) cached_tokens=(?P<cached>\d+)'
                  r' completion_tokens=(?P<completion>\d+) finish=(?P<finish>\S+) stream=(?P<stream>true|false))?'
                  r'(?: error=(?P<error>"(?:[^"\\]|\\.)*"))?$')


class AccessLogTest(SharedSeatTest):
    def lines(self):
        """Every access-log line so far, parsed."""
        out = []
        for raw in self.seat.read_log().splitlines():
            m = None
            # The logger's prefix (time, level) comes first; the line proper
            # starts at the peer address.
            for start in [i for i, c in enumerate(raw) if c == " "]:
                m = LINE.fullmatch(raw[start + 1:])
                if m:
                    break
            if m:
                out.append(m)
        return out

    def line_for(self, key, value, timeout=60.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for m in self.lines():
                if m.group(key) == value:
                    return m
            time.sleep(0.05)
        self.fail("no access-log line with %s=%s in:\n%s" % (key, value, self.seat.read_log()))

    def test_a_chat_completion_line_matches_what_the_client_got(self):
        r = self.client.chat.completions.create(model="scripted", max_tokens=30, temperature=0,
                                                messages=[{"role": "user", "content": "say HELLO_PROSE"}])
        m = self.line_for("id", r.id)
        self.assertTrue(m.group("remote").startswith("127.0.0.1:"), m.group(0))
        self.assertEqual(json.loads(m.group("what")), "POST /v1/chat/completions")
        self.assertEqual(m.group("status"), "200")
        self.assertEqual(int(m.group("prompt")), r.usage.prompt_tokens)
        self.assertEqual(int(m.group("completion")), r.usage.completion_tokens)
        self.assertEqual(m.group("finish"), r.choices[0].finish_reason)
        self.assertEqual(m.group("stream"), "false")
        self.assertGreater(float(m.group("ms")), 0.0)

    def test_a_streamed_completion_with_two_choices(self):
        stream = self.client.completions.create(model="scripted", prompt="count COUNT_STOP", max_tokens=4, n=2,
                                                temperature=0.7, stream=True, stream_options={"include_usage": True})
        rid, usage, finish = None, None, {}
        for chunk in stream:
            rid = chunk.id
            if chunk.usage:
                usage = chunk.usage
            for c in chunk.choices:
                if c.finish_reason:
                    finish[c.index] = c.finish_reason
        m = self.line_for("id", rid)
        self.assertEqual(json.loads(m.group("what")), "POST /v1/completions")
        self.assertEqual(m.group("stream"), "true")
        self.assertEqual(int(m.group("prompt")), usage.prompt_tokens)
        self.assertEqual(int(m.group("completion")), usage.completion_tokens)
        self.assertEqual(m.group("finish"), ",".join(finish[i] for i in sorted(finish)))

    def test_a_refused_request_logs_its_status_and_error(self):
        status, text, _ = self.seat.post("/v1/chat/completions", {"model": "scripted", "max_tokens": -3,
                                                                   "messages": [{"role": "user", "content": "x"}]})
        self.assertEqual(status, 400, text)
        message = json.loads(text)["error"]["message"]
        deadline = time.time() + 60
        while time.time() < deadline:
            hits = [m for m in self.lines() if m.group("status") == "400" and m.group("error")
                    and json.loads(m.group("error")) == message[:300]]
            if hits:
                break
            time.sleep(0.05)
        self.assertTrue(hits, "no 400 line with %r in:\n%s" % (message, self.seat.read_log()))
        self.assertEqual(json.loads(hits[0].group("what")), "POST /v1/chat/completions")
        self.assertIsNone(hits[0].group("id"))  # no generation started

    def generated_tokens_metric(self):
        status, text = self.seat.get("/metrics")
        self.assertEqual(status, 200)
        return int(float(re.search(r"^seatrt_generation_tokens_total (\S+)$", text, re.M).group(1)))

    def test_a_client_that_leaves_mid_stream_is_logged_as_499(self):
        before = self.generated_tokens_metric()
        body = json.dumps({"model": "scripted", "prompt": "ramble", "max_tokens": 400, "stream": True}).encode()
        with socket.create_connection(("127.0.0.1", self.seat.port)) as s:
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + API_KEY.encode() +
                      b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            s.settimeout(30)
            got = b""
            while got.count(b"data: ") < 4:
                got += s.recv(65536)
        events = [json.loads(part.split(b"\n", 1)[0]) for part in got.split(b"data: ")[1:4]]
        rid = events[0]["id"]
        m = self.line_for("id", rid, timeout=30)
        self.assertEqual(m.group("status"), "499")
        self.assertEqual(m.group("stream"), "true")
        # The tokens it had been sent count (they were once logged as 0), in
        # /metrics too (they were once left out of it).
        self.assertGreaterEqual(int(m.group("completion")), len(events))
        self.assertEqual(self.generated_tokens_metric() - before, int(m.group("completion")))

    def test_the_path_is_quoted_so_a_client_cannot_forge_fields(self):
        # A path with a quote and a non-ASCII byte: still one line, one field.
        path = '/v1/nope"x=1\u00e9'
        with socket.create_connection(("127.0.0.1", self.seat.port)) as s:
            s.sendall(('GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n'
                       % (path, API_KEY)).encode())
            s.settimeout(60)
            reply = b""
            while True:
                part = s.recv(65536)
                if not part:
                    break
                reply += part
        self.assertTrue(reply.startswith(b"HTTP/1.1 404"), reply[:200])
        deadline = time.time() + 60
        while time.time() < deadline:
            hits = [m for m in self.lines() if m.group("status") == "404"]
            if hits:
                break
            time.sleep(0.05)
        self.assertTrue(hits, self.seat.read_log())
        self.assertEqual(json.loads(hits[-1].group("what")), "GET " + path)
        self.assertNotIn('"x=1', hits[-1].group(0).replace('\\"x=1', ""))

    def test_a_message_with_a_nul_is_logged_and_answered_whole(self):
        status, text, _ = self.seat.post("/v1/chat/completions", {"model": "ab\u0000cd", "max_tokens": 1,
                                                                   "messages": [{"role": "user", "content": "x"}]})
        self.assertEqual(status, 404, text)
        message = json.loads(text)["error"]["message"]
        self.assertIn("ab\u0000cd", message)  # not cut at the NUL
        self.assertIn("does not exist", message)
        self.line_for("status", "404")  # wait for the line
        hits = [x for x in self.lines() if x.group("error") and "ab\u0000cd" in json.loads(x.group("error"))]
        self.assertTrue(hits, self.seat.read_log())

    def test_a_request_that_is_not_http_is_logged_too(self):
        with socket.create_connection(("127.0.0.1", self.seat.port)) as s:
            s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            s.settimeout(60)
            reply = s.recv(65536)
        self.assertTrue(reply.startswith(b"HTTP/1.1 400"), reply[:100])
        deadline = time.time() + 60
        while time.time() < deadline:
            hits = [m for m in self.lines() if json.loads(m.group("what")) == "- -" and m.group("status") == "400"]
            if hits:
                break
            time.sleep(0.05)
        self.assertTrue(hits, self.seat.read_log())
        self.assertIn("not valid HTTP", json.loads(hits[0].group("error")))

    def test_probes_stay_out_of_the_info_log(self):
        for p in ("/health", "/ready", "/metrics"):
            self.assertEqual(self.seat.get(p)[0], 200)
        # A logged request after the probes: once its line is there, the
        # probes' would be too.
        marker = "/no-such-path-after-probes"
        self.assertEqual(self.seat.get(marker)[0], 404)
        self.line_for("what", json.dumps("GET " + marker))
        for m in self.lines():
            self.assertNotIn(json.loads(m.group("what")), ("GET /health", "GET /ready", "GET /metrics"))


if __name__ == "__main__":
    unittest.main()
