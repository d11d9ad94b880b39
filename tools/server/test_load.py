"""Load: 128 concurrent streaming clients against a KV pool small enough to
force preemption.  Every stream must equal the same request run alone with
the same seed; afterwards every KV block is free.  Clients that disconnect
mid-stream free their blocks."""

import concurrent.futures
import json
import threading
import time
import unittest
import urllib.request

from seat_harness import API_KEY, Seat

CLIENTS = 128
MAX_TOKENS = 24


def prompt(i):
    return "load test client %d: write words" % i


class LoadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # 1.1x max context (~563 tokens) for 32 running sequences of ~50 tokens.
        cls.seat = Seat(max_num_seqs=32, kv_multiple=1.1, max_model_len=512, max_num_batched_tokens=256,
                        block_size=8).start()
        cls.client = cls.seat.client()

    @classmethod
    def tearDownClass(cls):
        code = cls.seat.stop()
        cls.seat.log.close()
        assert code == 0, cls.seat.read_log()

    def stream(self, i):
        text, finish = "", None
        for chunk in self.client.chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": prompt(i)}], max_tokens=MAX_TOKENS,
                temperature=1.0, seed=i, stream=True):
            for c in chunk.choices:
                text += c.delta.content or ""
                finish = c.finish_reason or finish
        return text, finish

    def wait_blocks_free(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.seat.metric("seatrt_kv_blocks_used") == 0 and self.seat.metric("seatrt_running_sequences") == 0:
                return
            time.sleep(0.05)
        self.fail("KV blocks still used: %s" % self.seat.metric("seatrt_kv_blocks_used"))

    def test_concurrent_streams_equal_solo_runs_under_preemption(self):
        alone = [self.stream(i) for i in range(CLIENTS)]
        for text, finish in alone:
            self.assertEqual(finish, "length")
            self.assertTrue(text)
        preempted_before = self.seat.metric("seatrt_preemptions_total")
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            together = list(pool.map(self.stream, range(CLIENTS)))
        mismatches = [i for i in range(CLIENTS) if together[i] != alone[i]]
        self.assertEqual(mismatches, [], "streams differing from their solo run")
        self.assertGreater(self.seat.metric("seatrt_preemptions_total"), preempted_before,
                           "the pool was meant to be small enough to force preemption")
        self.wait_blocks_free()

    def test_disconnecting_clients_free_their_blocks(self):
        gone_before = self.count_status("499")
        body = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": "long story"}],
                           "max_tokens": 480, "stream": True}).encode()

        def start_and_drop(_):
            req = urllib.request.Request(self.seat.base_url + "/v1/chat/completions", data=body, method="POST")
            req.add_header("Content-Type", "application/json")
            req.add_header("Authorization", "Bearer " + API_KEY)
            r = urllib.request.urlopen(req, timeout=30)
            r.readline()  # the first event: the request is running
            r.close()

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(start_and_drop, range(8)))
        self.wait_blocks_free()
        deadline = time.time() + 60
        while self.count_status("499") - gone_before < 8 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.count_status("499") - gone_before, 8, "every dropped stream was cancelled early")

    def count_status(self, status):
        _, text = self.seat.get("/metrics")
        total = 0
        for line in text.splitlines():
            if line.startswith("seatrt_requests_total{") and 'status="%s"' % status in line:
                total += int(float(line.split()[1]))
        return total


if __name__ == "__main__":
    unittest.main(verbosity=2)
