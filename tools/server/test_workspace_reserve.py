"""The load-time workspace reservation ([kernels] reserve_workspace,
runtime/engine/workspace_reserve.hpp) on the demo seat: the tiny Gemma-4
fixture model on the CPU provider, where it is off unless asked for.

- With it on, /v1/seat reports the steps the seat file's limits call for
  (a prefill of max_num_batched_tokens, a decode step of max_num_seqs rows
  over max_model_len's blocks, device sampling) and the memory they left.
- The steps write K/V into blocks the engine later hands to requests: the
  same greedy requests give the same tokens and log-probabilities with the
  reservation as without it."""

import json
import os
import tomllib
import unittest

from seat_harness import ROOT, DemoSeat

PROMPTS = ["The quick brown fox", "Once upon a time", "1, 2, 3, 4,", "Paris is the capital of"]


def demo_limits():
    with open(os.path.join(ROOT, "configs", "demo.toml"), "rb") as f:
        seat = tomllib.load(f)
    return seat["scheduler"], seat["model"], seat["cache"]


def completions(seat):
    out = []
    for prompt in PROMPTS:
        status, raw, _ = seat.post("/v1/completions", {"model": "demo", "prompt": prompt, "max_tokens": 24,
                                                       "temperature": 0, "logprobs": 1})
        if status != 200:
            raise AssertionError("%d: %s\n%s" % (status, raw, seat.read_log()))
        choice = json.loads(raw)["choices"][0]
        out.append((choice["text"], choice["logprobs"]["token_logprobs"]))
    return out


def memory_plan(seat):
    status, raw = seat.get("/v1/seat")
    if status != 200:
        raise AssertionError("%d: %s" % (status, raw))
    return json.loads(raw)["memory_plan"]


class WorkspaceReserveTest(unittest.TestCase):
    def test_reservation_runs_the_limits_steps_and_changes_no_output(self):
        with DemoSeat(kernels_extra="reserve_workspace = false") as seat:
            plain_plan = memory_plan(seat)
            plain = completions(seat)
        self.assertIsNone(plain_plan["provider_workspace_reserved"])
        self.assertEqual(plain_plan["provider_workspace"], 0)

        with DemoSeat(kernels_extra="reserve_workspace = true") as seat:
            plan = memory_plan(seat)
            reserved = completions(seat)
            log = seat.read_log()
        scheduler, model, cache = demo_limits()
        r = plan["provider_workspace_reserved"]
        self.assertIsNotNone(r, log)
        self.assertEqual(r["prefill_tokens"], scheduler["max_num_batched_tokens"])
        self.assertEqual(r["decode_seqs"], scheduler["max_num_seqs"])
        block = cache["block_size"]
        self.assertEqual(r["table_width"], (model["max_model_len"] + block - 1) // block + 1)
        self.assertTrue(r["sampled_on_device"])  # the CPU provider has a sample op
        self.assertEqual(plan["provider_workspace"], r["bytes"])
        self.assertIn("kernel provider workspace", plan["summary"])
        self.assertIn("reserved by a prefill of %d tokens" % scheduler["max_num_batched_tokens"], log)

        self.assertEqual(len(reserved), len(PROMPTS))
        for (text_a, lp_a), (text_b, lp_b), prompt in zip(plain, reserved, PROMPTS):
            self.assertEqual(text_a, text_b, prompt)
            self.assertEqual(len(lp_a), len(lp_b))
            for a, b in zip(lp_a, lp_b):
                self.assertAlmostEqual(a, b, places=5, msg=prompt)


if __name__ == "__main__":
    unittest.main(verbosity=2)
