#!/usr/bin/env python3
"""A tokenizer for serving the full-size synthetic checkpoint: the test tokenizer padded to 262,144 ids.

The synthetic checkpoint (tools/synth/make_synthetic_checkpoint.py) has no tokenizer, and the real
Gemma-4 tokenizer.json is not available to us.  The test tokenizer
(tests/fixtures/tokenizer/tokenizer.json, Gemma-4 pipeline, 4,096 ids) encodes prompts well enough,
but a random-weight model samples ids uniformly over the model's 262,144: with the test tokenizer
98% of them would decode to nothing (the server skips unknown ids), so the server's canary (which
needs non-empty text) fails and the benchmark would see almost no text events.

So this script keeps the test tokenizer as it is (same ids, merges, added and special tokens; prompts
encode exactly as before) and appends plain vocabulary entries for ids 4,096 .. 262,143, each
'\u2581#' + its id in base 36 (decodes to ' #2s3'), so every id the model can produce decodes to
visible text.  No merge produces the new entries, so encoding is unchanged.

Usage: python3 tools/bench/make_bench_tokenizer.py OUT_DIR [--vocab 262144] [--source DIR]
Writes OUT_DIR/tokenizer.json and OUT_DIR/tokenizer_config.json (copied from the source).
"""
import argparse
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = os.path.join(HERE, "..", "..", "tests", "fixtures", "tokenizer")


def base36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    while True:
        n, r = divmod(n, 36)
        s = digits[r] + s
        if n == 0:
            return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, default=262144, help="ids the padded tokenizer covers")
    ap.add_argument("--source", default=DEFAULT_SOURCE, help="directory with tokenizer.json + tokenizer_config.json")
    args = ap.parse_args()
    with open(os.path.join(args.source, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    used_ids = set(vocab.values()) | {t["id"] for t in tok.get("added_tokens", [])}
    first = max(used_ids) + 1
    if args.vocab < first:
        raise SystemExit(f"--vocab {args.vocab} is smaller than the source tokenizer's {first} ids")
    for i in range(first, args.vocab):
        piece = "\u2581#" + base36(i)
        if piece in vocab:
            raise SystemExit(f"padding entry {piece!r} already exists in the source vocabulary")
        vocab[piece] = i
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    shutil.copy(os.path.join(args.source, "tokenizer_config.json"), os.path.join(args.out, "tokenizer_config.json"))
    print(f"bench tokenizer: {args.out}/tokenizer.json, ids 0..{args.vocab - 1} ({args.vocab - first} padding entries)")


if __name__ == "__main__":
    main()
