#!/usr/bin/env python3
"""Make the tiny sentencepiece fixture and its oracle (issue 4).

Trains a small BPE sentencepiece model with byte fallback on varied text and records what the
Python sentencepiece library (the oracle; pip install sentencepiece==0.2.3) gives for a few hard
strings.  Writes tests/fixtures/tokenizer/sp_tiny.model and sp_corpus.json.
Run from the repository root:  python3 tools/text/make_sentencepiece_fixture.py
"""

from __future__ import annotations

import io
import json
import pathlib
import sys

import sentencepiece as spm

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fixtures/tokenizer"
sys.path.insert(0, str(ROOT / "tools/text"))
from make_test_tokenizer import HARD_STRINGS, MULTILINGUAL  # noqa: E402


def main() -> None:
    lines = [line for line in MULTILINGUAL.splitlines() if line.strip()]
    for path in sorted((ROOT / "tests/fixtures/templates").glob("*.jinja")):
        lines += [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, vocab_size=600, model_type="bpe",
        byte_fallback=True, character_coverage=0.9995, seed_sentencepiece_size=10000,
        num_threads=1, minloglevel=2, normalization_rule_name="identity")
    (OUT / "sp_tiny.model").write_bytes(model.getvalue())
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    strings = [s for s in HARD_STRINGS if "\u0000" not in s][:40]
    cases = [{"text": s, "ids": sp.encode(s), "decoded": sp.decode(sp.encode(s))} for s in strings]
    out = {"oracle": "sentencepiece", "vocab_size": sp.get_piece_size(), "bos_id": sp.bos_id(),
           "eos_id": sp.eos_id(), "encode": cases}
    rows = [json.dumps(c, ensure_ascii=False) for c in cases]
    head = {k: v for k, v in out.items() if k != "encode"}
    text = json.dumps(head)[:-1] + ', "encode": [\n  ' + ",\n  ".join(rows) + "\n]}\n"
    (OUT / "sp_corpus.json").write_text(text, encoding="utf-8")
    print(f"wrote sp_tiny.model ({len(model.getvalue())} bytes), {len(cases)} cases")


if __name__ == "__main__":
    main()
