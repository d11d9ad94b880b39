"""A parser plugin that breaks the ABI fails only the request it was
serving, with an error naming the plugin, and the server goes on (found by a
plugin-robustness sweep: the server used to die, or to fail every request
in the same batch).  The parser is tests/server/plugins/misbehaving_parser.cpp;
the prompt picks its fault.  Run: python3 test_bad_plugins.py
(SEATRT_BUILD_DIR names the build tree)."""

import http.client
import json
import os
import signal
import tempfile
import threading
import time
import unittest

from seat_harness import API_KEY, Seat


# MB_HOLD's parser waits for this file (made by the test that holds it).
RELEASE_FILE = os.path.join(tempfile.mkdtemp(prefix="seatrt-release-"), "release")
os.environ["SEATRT_TEST_RELEASE_FILE"] = RELEASE_FILE


class BadPluginTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.seat = Seat(tool_parser="test-misbehaving-parser", reasoning_parser="").start()

    @classmethod
    def tearDownClass(cls):
        code = cls.seat.stop()
        cls.seat.log.close()
        assert code == 0, "seatrt serve exited %s after SIGTERM" % code

    def chat(self, text, max_tokens=8):
        return self.seat.post("/v1/chat/completions", {"model": "scripted", "max_tokens": max_tokens,
                                                       "messages": [{"role": "user", "content": text}]})

    def assert_fine(self):
        self.assertIsNone(self.seat.proc.poll(), self.seat.read_log())
        status, text, _ = self.chat("Please HELLO_PROSE now", max_tokens=40)
        self.assertEqual(status, 200, text)
        self.assertIn("Hello there", text)

    def test_each_fault_fails_its_request_naming_the_parser(self):
        for fault, words in (("MB_THROW", "threw an exception across the plugin ABI"),
                             ("MB_NULL_TEXT", "content event with NULL text"),
                             ("MB_NO_PARSER", "returned no parser"),
                             ("MB_BAD_CALL", "tool call with index 7"),
                             ("MB_EMPTY_MASK", "no token is allowed by the output constraint")):
            status, text, _ = self.chat("please %s now" % fault)
            self.assertEqual(status, 500, (fault, text))
            self.assertIn(words, text, fault)
            if fault != "MB_EMPTY_MASK":  # the engine's own message there
                self.assertIn("test-misbehaving-parser", text, fault)
            self.assert_fine()

    def test_an_empty_mask_fails_its_row_not_its_batch(self):
        # A long normal stream runs while the broken request shares its steps.
        result = {}

        def normal():
            result["normal"] = self.chat("ramble on", max_tokens=200)

        t = threading.Thread(target=normal)
        t.start()
        status, text, _ = self.chat("please MB_EMPTY_MASK now")
        t.join(60)
        self.assertEqual(status, 500, text)
        self.assertEqual(result["normal"][0], 200, result["normal"][1])


    def test_a_slow_parser_delays_only_its_own_request(self):
        # MB_HOLD's first feed takes 50 ms, so its later ones run off the
        # engine thread; those wait for the release file.  A request beside
        # it must run to its end meanwhile: inline, the held parser would
        # hold every step and the other request could never finish.
        result = {}
        first_chunk = threading.Event()

        def held():
            body = json.dumps({"model": "scripted", "max_tokens": 80, "stream": True,
                               "messages": [{"role": "user", "content": "please MB_HOLD now"}]})
            conn = http.client.HTTPConnection("127.0.0.1", self.seat.port, timeout=120)
            conn.request("POST", "/v1/chat/completions", body,
                         {"Content-Type": "application/json", "Authorization": "Bearer " + API_KEY})
            response = conn.getresponse()
            result["status"] = response.status
            result["first"] = response.readline()
            first_chunk.set()
            result["rest"] = response.read().decode()
            conn.close()

        t = threading.Thread(target=held)
        t.start()
        try:
            self.assertTrue(first_chunk.wait(120), "the held request never started streaming")
            status, text, _ = self.chat("ramble on", max_tokens=40)
            self.assertEqual(status, 200, text)
            self.assertTrue(t.is_alive(), "the held request ended while its parser was held")
        finally:
            open(RELEASE_FILE, "w").close()
            t.join(120)
        self.assertEqual(result["status"], 200, result)
        events = [line[6:] for line in result["rest"].splitlines() if line.startswith("data: ")]
        self.assertEqual(events[-1], "[DONE]")
        finishes = [c["finish_reason"] for e in events[:-1] for c in json.loads(e).get("choices", [])
                    if c.get("finish_reason")]
        self.assertEqual(finishes, ["length"])
        status, metrics = self.seat.get("/metrics")
        self.assertRegex(metrics, r"seatrt_slow_output_sequences_total [1-9]")


class DrainTimeoutTest(unittest.TestCase):
    def test_a_request_still_running_at_the_drain_timeout_ends_with_503(self):
        # A slow stream outlives drain_timeout_s: it must end with an error
        # event its client can read and [DONE], logged as 503, not be cut
        # and logged as the client's 499.
        seat = Seat(tool_parser="test-misbehaving-parser", reasoning_parser="", drain_timeout_s=1.0).start()
        try:
            body = json.dumps({"model": "scripted", "max_tokens": 400, "stream": True,
                               "messages": [{"role": "user", "content": "please MB_SLOW now"}]})
            conn = http.client.HTTPConnection("127.0.0.1", seat.port, timeout=30)
            conn.request("POST", "/v1/chat/completions", body,
                         {"Content-Type": "application/json", "Authorization": "Bearer " + API_KEY})
            response = conn.getresponse()
            self.assertEqual(response.status, 200)
            first = response.readline()  # the stream has begun
            self.assertTrue(first.startswith(b"data: "), first)
            seat.proc.send_signal(signal.SIGTERM)
            rest = response.read().decode()  # to the end of the stream
            events = [line[6:] for line in rest.splitlines() if line.startswith("data: ")]
            code = seat.proc.wait(30)
        finally:
            if seat.proc.poll() is None:
                seat.proc.kill()
        self.assertEqual(code, 0, seat.read_log())
        self.assertEqual(events[-1], "[DONE]", events[-3:])
        error = json.loads(events[-2])["error"]
        self.assertEqual(error["code"], 503)
        self.assertIn("drain_timeout_s", error["message"])
        self.assertRegex(seat.read_log(), r'"POST /v1/chat/completions" 503 ')


if __name__ == "__main__":
    unittest.main(verbosity=2)
