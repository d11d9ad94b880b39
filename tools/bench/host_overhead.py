#!/usr/bin/env python3
"""The engine's host work per decode step, from a running seat's /metrics.

Between the model runner's calls the engine thread schedules, builds the
batch, asks the parsers for masks and runs every sequence's output callback
(parser plugin, detokenizer, stop strings); a device waits through that
time.  /metrics splits each step's time into the model's calls and the
rest (seatrt_engine_step_seconds_total, seatrt_engine_model_seconds_total).
This starts the scripted test seat (tools/server/seat_harness.py: the CPU
provider, a host-side fake model, the real gemma4 parsers and detokenizer),
runs `concurrency` streaming chat requests of `tokens` tokens each at a
time, and prints host microseconds per step and per token.  Prompts carry
an OS random nonce (no prefix-cache hits).

  SEATRT_BUILD_DIR=$PWD/build-cpu python3 tools/bench/host_overhead.py [--concurrency 1,8,32] [--tokens 200]
"""

import argparse
import os
import secrets
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
from seat_harness import Seat  # noqa: E402


STREAM = True


def read(seat):
    _, text = seat.get("/metrics")
    out = {}
    for line in text.splitlines():
        for name in ("seatrt_engine_steps_total", "seatrt_engine_step_seconds_total",
                     "seatrt_engine_model_seconds_total", "seatrt_generation_tokens_total"):
            if line.startswith(name + " "):
                out[name] = float(line.split()[1])
    return out


def run(seat, concurrency, tokens):
    client = seat.client()

    def one():
        stream = client.chat.completions.create(
            model="scripted", stream=STREAM, max_tokens=tokens, temperature=0.7,
            extra_body={"ignore_eos": True},
            messages=[{"role": "user", "content": "nonce %s: tell me a long story" % secrets.token_hex(8)}])
        if STREAM:
            for _ in stream:
                pass

    before = read(seat)
    threads = [threading.Thread(target=one) for _ in range(concurrency)]
    start = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - start
    after = read(seat)
    d = {k: after[k] - before[k] for k in after}
    steps = d["seatrt_engine_steps_total"]
    host = d["seatrt_engine_step_seconds_total"] - d["seatrt_engine_model_seconds_total"]
    return {"steps": steps, "tokens": d["seatrt_generation_tokens_total"], "wall_s": wall,
            "host_us_per_step": 1e6 * host / steps, "host_us_per_token": 1e6 * host / d["seatrt_generation_tokens_total"],
            "model_us_per_step": 1e6 * d["seatrt_engine_model_seconds_total"] / steps}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrency", default="1,8,32")
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-stream", action="store_true", help="whole answers (fewer HTTP writes beside the engine)")
    args = ap.parse_args()
    global STREAM
    STREAM = not args.no_stream
    with Seat(max_num_seqs=32, max_model_len=1024, max_num_batched_tokens=2048) as seat:
        run(seat, 2, 16)  # warm-up
        print("concurrency  steps  tokens/step  host_us/step  host_us/token  model_us/step  (median of %d)"
              % args.repeats)
        for c in [int(x) for x in args.concurrency.split(",")]:
            rs = [run(seat, c, args.tokens) for _ in range(args.repeats)]
            med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
            print("%11d  %5d  %11.1f  %12.1f  %13.1f  %13.1f" % (
                c, med["steps"], med["tokens"] / med["steps"], med["host_us_per_step"], med["host_us_per_token"],
                med["model_us_per_step"]))


if __name__ == "__main__":
    main()
