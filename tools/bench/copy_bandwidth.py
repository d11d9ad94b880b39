#!/usr/bin/env python3
"""Device-to-device copy bandwidth of GPU 0, the ceiling every byte limit is computed from.

Same method as tools/bench/bench_ops.cpp and ../shared/spec/benchmarking.md: a 4 GiB buffer
copied into another, bytes read + written / time, median of 3 rounds of 10 copies (after one
untimed copy).  Prints the figure and writes {"copy_bandwidth_Bps": ...} to --json.
Usage: python3 tools/bench/copy_bandwidth.py [--gib 4] [--json out.json]
"""
import argparse
import json
import statistics
import sys

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=4.0)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("copy_bandwidth: no CUDA device")
    n = int(args.gib * 2**30)
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    rounds = []
    for _ in range(3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(10):
            dst.copy_(src)
        end.record()
        end.synchronize()
        rounds.append(2 * n * 10 / (start.elapsed_time(end) / 1e3))
    bw = statistics.median(rounds)
    print(f"copy bandwidth: {bw / 1e12:.3f} TB/s ({args.gib:g} GiB D2D, read + written, median of 3 x 10; "
          f"rounds {', '.join(f'{r / 1e12:.3f}' for r in rounds)})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"copy_bandwidth_Bps": bw, "rounds_Bps": rounds, "gpu": torch.cuda.get_device_name(0)}, f)


if __name__ == "__main__":
    main()
