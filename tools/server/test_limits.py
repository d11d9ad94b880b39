"""Start-up refusals and the bounded queue: a KV pool that does not fit on
the device, or is too small for one max-length sequence, stops the seat
with both numbers and what to change; past the waiting queue requests get
429 with Retry-After."""

import concurrent.futures
import json
import os
import tempfile
import time
import unittest

from seat_harness import Seat


class LimitsTest(unittest.TestCase):
    def start_fails(self, seat):
        with self.assertRaises(RuntimeError) as e:
            seat.start()
        seat.log.close()
        seat.tmp.cleanup()
        return str(e.exception)

    def test_pool_larger_than_the_device_is_refused_with_both_numbers(self):
        msg = self.start_fails(Seat(kv_bytes=10 ** 15))
        self.assertIn("does not fit on the device", msg)
        self.assertIn("1000000000000000", msg)  # needed
        self.assertIn("are free", msg)
        self.assertIn("kv_cache_memory", msg)

    def test_pool_smaller_than_one_sequence_is_refused(self):
        msg = self.start_fails(Seat(kv_bytes=4096))
        self.assertIn("kv_cache_memory 4096 bytes is too small", msg)
        self.assertIn("max_model_len", msg)

    def test_queue_overflow_is_429_with_retry_after(self):
        # One running sequence, held by the test parser (MB_HOLD: it waits
        # for a release file), and one waiting: every request past them is
        # a 429, whatever the machine's speed.
        release = os.path.join(tempfile.mkdtemp(prefix="seatrt-release-"), "release")
        os.environ["SEATRT_TEST_RELEASE_FILE"] = release
        with Seat(max_num_seqs=1, max_queue=1, tool_parser="test-misbehaving-parser", reasoning_parser="") as seat:
            def post(text):
                body = {"model": "scripted", "messages": [{"role": "user", "content": text}], "max_tokens": 40}
                status, _, headers = seat.post("/v1/chat/completions", body)
                return status, headers.get("Retry-After")

            def wait_for(metric, value):
                deadline = time.monotonic() + 60
                while seat.metric(metric) != value:
                    self.assertLess(time.monotonic(), deadline, "%s never reached %s" % (metric, value))
                    time.sleep(0.02)

            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                try:
                    held = pool.submit(post, "please MB_HOLD now")
                    wait_for("seatrt_running_sequences", 1)
                    queued = pool.submit(post, "busy")
                    wait_for("seatrt_queue_depth", 1)
                    refused = [post("busy") for _ in range(3)]
                finally:
                    open(release, "w").close()
                self.assertEqual(refused, [(429, "1")] * 3)
                self.assertEqual(held.result(timeout=120)[0], 200)
                self.assertEqual(queued.result(timeout=120)[0], 200)

    def test_request_past_request_timeout_is_cancelled_with_504(self):
        # The test parser's MB_SLOW feed sleeps 20 ms a token, so 480 tokens
        # take at least 9.6 s on any machine, far past the timeout; the
        # request is cancelled, says why, and frees its blocks.
        with Seat(request_timeout_s=0.02, tool_parser="test-misbehaving-parser", reasoning_parser="") as seat:
            body = {"model": "scripted", "messages": [{"role": "user", "content": "please MB_SLOW now"}],
                    "max_tokens": 480}
            status, raw, _ = seat.post("/v1/chat/completions", body)
            self.assertEqual(status, 504, raw)
            error = json.loads(raw)["error"]
            self.assertEqual(error["type"], "TimeoutError")
            self.assertIn("request_timeout_s", error["message"])
            status, raw, _ = seat.post("/v1/chat/completions", dict(body, stream=True))
            self.assertEqual(status, 200)  # the stream had started; the error comes as an event
            self.assertIn("TimeoutError", raw.decode() if isinstance(raw, bytes) else raw)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if seat.metric("seatrt_kv_blocks_used") == 0 and seat.metric("seatrt_running_sequences") == 0:
                    break
                time.sleep(0.01)
            self.assertEqual(seat.metric("seatrt_kv_blocks_used"), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
