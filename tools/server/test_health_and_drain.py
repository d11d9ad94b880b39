"""A seat whose model produces NaN fails /ready and its requests fail with
a clear error; a NaN in the middle of a request turns /ready false; SIGTERM
during load lets in-flight requests complete, refuses new ones, exits 0."""

import concurrent.futures
import json
import signal
import threading
import time
import unittest

import openai

from seat_harness import Seat


class NanSeatTest(unittest.TestCase):
    def test_nan_model_is_not_ready_and_requests_fail_clearly(self):
        with Seat(nan=True) as seat:
            status, body = seat.get("/ready", key=None)
            self.assertEqual(status, 503)
            self.assertIn("non-finite", json.loads(body)["reason"])
            client = seat.client()
            with self.assertRaises(openai.InternalServerError) as e:
                client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "hi"}],
                                               max_tokens=8, logprobs=True)
            self.assertIn("non-finite logits", str(e.exception))
            with self.assertRaises(openai.APIError) as e:
                for _ in client.chat.completions.create(model="scripted", max_tokens=8, stream=True,
                                                        messages=[{"role": "user", "content": "hi"}]):
                    pass
            self.assertIn("non-finite", str(e.exception))
            self.assertGreater(seat.metric("seatrt_non_finite_logits_total"), 0)
            self.assertEqual(seat.metric("seatrt_kv_blocks_used"), 0)

    def test_nan_midway_fails_the_request_and_turns_ready_false(self):
        with Seat() as seat:
            self.assertEqual(seat.get("/ready", key=None)[0], 200)
            client = seat.client()
            with self.assertRaises(openai.InternalServerError) as e:
                client.chat.completions.create(model="scripted", max_tokens=32, temperature=0,
                                               messages=[{"role": "user", "content": "Please NAN_MIDWAY now"}])
            self.assertIn("output token 3", str(e.exception))
            status, body = seat.get("/ready", key=None)
            self.assertEqual(status, 503)
            self.assertIn("non-finite", json.loads(body)["reason"])


class DrainTest(unittest.TestCase):
    def test_sigterm_during_load(self):
        seat = Seat(max_num_seqs=16, drain_timeout_s=60).start()
        client = seat.client()
        started = threading.Barrier(17)

        def run(i):
            text, finish, n = "", None, 0
            first = True
            for chunk in client.chat.completions.create(
                    model="scripted", messages=[{"role": "user", "content": "drain %d" % i}], max_tokens=300,
                    temperature=1.0, seed=i, stream=True, stream_options={"include_usage": True}):
                if first:
                    first = False
                    started.wait(30)
                if chunk.usage:
                    n = chunk.usage.completion_tokens
                for c in chunk.choices:
                    finish = c.finish_reason or finish
            return finish, n

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(run, i) for i in range(16)]
            started.wait(30)
            seat.proc.send_signal(signal.SIGTERM)
            # The drain has begun once /ready says so (or the port is closed).
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if seat.get("/ready", key=None)[0] == 503:
                        break
                except OSError:
                    break
                time.sleep(0.05)
            else:
                self.fail("/ready never turned 503 after SIGTERM")
            with self.assertRaises((openai.APIConnectionError, openai.InternalServerError,
                                    openai.APIStatusError)):
                seat.client().chat.completions.create(model="scripted", max_tokens=4,
                                                      messages=[{"role": "user", "content": "late"}])
            results = [f.result(timeout=120) for f in futures]
        self.assertEqual(results, [("length", 300)] * 16)
        code = seat.proc.wait(60)
        seat.log.close()
        self.assertEqual(code, 0, seat.read_log())
        self.assertIn("drained", seat.read_log())
        seat.tmp.cleanup()


if __name__ == "__main__":
    unittest.main(verbosity=2)
