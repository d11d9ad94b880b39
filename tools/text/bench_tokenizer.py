#!/usr/bin/env python3
"""Benchmark: encode a ~256K-token prompt with seatrt's tokenizer and with Hugging Face tokenizers.

Builds the prompt from the test corpus (multilingual text, chat templates, the spec), encodes it with
`tokenizers` (one call, one thread) and with build/tests/text/bench_tokenizer (C++), best of N runs
each, in the same process run, and prints a Markdown table row for docs/benchmarks.md.
Usage: python3 tools/text/bench_tokenizer.py BUILD_DIR [TOKENIZER_JSON] [TARGET_TOKENS]
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tokenizers import Tokenizer  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools/text"))
from make_test_tokenizer import HARD_STRINGS, MULTILINGUAL  # noqa: E402


def build_prompt(tok: Tokenizer, target_tokens: int) -> str:
    parts = [MULTILINGUAL] + [s for s in HARD_STRINGS if s]
    parts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests/fixtures/templates").glob("*.jinja"))]
    unit = "\n".join(parts)
    per_unit = len(tok.encode(unit, add_special_tokens=False).ids)
    return unit * (target_tokens // per_unit + 1)


def main() -> None:
    build = pathlib.Path(sys.argv[1])
    tokenizer_json = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "tests/fixtures/tokenizer/tokenizer.json")
    target = int(sys.argv[3]) if len(sys.argv) > 3 else 256 * 1024
    tok = Tokenizer.from_file(tokenizer_json)
    text = build_prompt(tok, target)
    data = text.encode("utf-8")
    best = 1e30
    for _ in range(3):
        t0 = time.perf_counter()
        ids = tok.encode(text, add_special_tokens=False).ids
        best = min(best, time.perf_counter() - t0)
    with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as f:
        f.write(data)
    out = subprocess.run([str(build / "bin/bench_tokenizer"), tokenizer_json, f.name, "3"],
                         check=True, capture_output=True, text=True).stdout
    os.unlink(f.name)
    ours = json.loads(out)
    assert ours["tokens"] == len(ids), (ours["tokens"], len(ids))
    mb = len(data) / 1e6
    print(f"| {platform.processor() or platform.machine()} | {len(ids)} tokens, {mb:.2f} MB "
          f"| seatrt {ours['seconds']:.3f} s ({ours['mb_per_s']:.1f} MB/s) "
          f"| tokenizers {best:.3f} s ({mb / best:.1f} MB/s) | {best / ours['seconds']:.2f}x |")


if __name__ == "__main__":
    main()
