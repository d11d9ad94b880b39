#!/usr/bin/env python3
"""Make the Gemma-style test tokenizer and its oracle ids (issue 4).

Writes, under tests/fixtures/tokenizer/:
  tokenizer.json         BPE + byte_fallback, Gemma-4 pipeline (normalizer Replace(' ' -> '▁'),
                         pre-tokenizer Split(' ', merged_with_previous), decoder
                         Replace('▁' -> ' ') + ByteFallback + Fuse), EXACTLY 4096 entries,
                         the 24 Gemma-4 special tokens at ids 0..23 (<pad> 0, <eos> 1, <bos> 2).
  tokenizer_config.json  Gemma-4's named special tokens, chat_template = the canonical template.
  corpus.json            the oracle: for each hard string, the ids the Hugging Face `tokenizers`
                         library gives (with and without special tokens) and its decodes;
                         plus decode-only id sequences (broken byte runs, specials).

Oracle = `tokenizers` (pip install tokenizers==0.23.3).  Run from the repository root:
  python3 tools/text/make_test_tokenizer.py
"""

from __future__ import annotations

import json
import pathlib

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers.trainers import BpeTrainer

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fixtures/tokenizer"
TEMPLATE = ROOT / "tests/fixtures/templates/gemma4_chat_template.jinja"
VOCAB_SIZE = 4096

# Gemma-4's added tokens (../shared/gemma4/gemma4-files/special_tokens.json), basic ones first so
# that <pad>/<eos>/<bos> land on 0/1/2 like the tiny model expects.
SPECIALS = [
    "<pad>", "<eos>", "<bos>", "<unk>", "<mask>",
    "<|tool>", "<tool|>", "<|tool_call>", "<tool_call|>", "<|tool_response>", "<tool_response|>",
    '<|"|>', "<|think|>", "<|channel>", "<channel|>", "<|turn>", "<turn|>",
    "<|image>", "<|audio>", "<|image|>", "<|audio|>", "<image|>", "<audio|>", "<|video|>",
]
BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]

MULTILINGUAL = """
The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs.
Le cœur a ses raisons que la raison ne connaît point. Ça va? Très bien, merci!
Über den Wolken muss die Freiheit wohl grenzenlos sein. Grüße aus München.
¿Dónde está la biblioteca? El niño comió piña y jalapeños.
Быстрая коричневая лиса перепрыгивает через ленивую собаку.
Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.
素早い茶色の狐がのろまな犬を飛び越える。今日は良い天気ですね。
敏捷的棕色狐狸跳过了懒狗。我们今天去公园散步吧。
빠른 갈색 여우가 게으른 개를 뛰어넘는다. 안녕하세요!
नमस्ते, आप कैसे हैं? यह एक परीक्षण वाक्य है।
مرحبا بالعالم. هذه جملة اختبار.
שלום עולם, זה משפט בדיקה.
Emoji: 😀 😃 🎉 👍🏽 🇫🇷 ❤️ 🧪 — and symbols ∑ ∫ √ ≈ ≠ ≤ ≥ → ← ✓.
def main():\n    for i in range(10):\n\tprint(f"{i}: {i * i}")\n    return {"ok": True, "n": 1.5}
SELECT name, count(*) FROM users WHERE age > 21 GROUP BY name ORDER BY 2 DESC;
{"type": "function", "function": {"name": "get_weather", "parameters": {"city": "Paris"}}}
"""

HARD_STRINGS = [
    "",
    " ",
    "  ",
    "   leading spaces",
    "trailing spaces   ",
    "a  b   c    d",
    "\t",
    "tab\tseparated\tvalues",
    "\n",
    "\n\n\n",
    "line one\nline two\r\nline three",
    " \t \n mixed whitespace \n\t ",
    "Hello world",
    "Hello, World! How are you?",
    "The quick brown fox jumps over the lazy dog.",
    "emoji 😀 and family 👨‍👩‍👧‍👦 and flag 🇯🇵",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙 𐍈 𓀀",
    "中文测试：你好，世界！",
    "日本語のテキストとカタカナ",
    "한국어 문장",
    "e\u0301 a\u0300 n\u0303 combining marks",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dalgo",
    "zero\u200bwidth\u200djoiner\ufeffbom",
    "<bos>",
    "<bos>Hello<eos>",
    "<|turn>user\nHi<turn|>\n<|turn>model\n",
    "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>",
    "<|channel>thought\nthinking...<channel|>answer",
    "text with <|image|> inside",
    "<bos><bos><eos>",
    "<|turn",
    "<turn>",
    "< |turn>",
    "<|tool_call >",
    "<|notatoken|>",
    "<0x41>",
    "<unk> but not really <unk",
    "a<|\"|>b",
    "x" * 300,
    "supercalifragilisticexpialidocious" * 20,
    "ab" * 500,
    "😀" * 50,
    "▁already▁has▁metaspace",
    "mixed ▁ and spaces",
    "\u0000 nul and \u0007 bell \u001b[0m escape",
    "\u00ff\u0100\u07ff\u0800\uffff\U00010000\U0010ffff",
    "C:\\Windows\\path and \"quotes\" and 'apostrophes'",
    "https://example.com/a/b?c=d&e=f#g",
    "3.14159 2.71828 1e-10 -42 0x1F 1,000,000",
    "{\"key\": [1, 2, {\"nested\": null}]}",
    "def f(x):\n    return x ** 2\n",
    "Ünïcödé façade naïve café résumé",
    "Привет мир",
    "مرحبا",
    "ab\u0000cd",
]

# Decode-only id sequences: broken or interleaved byte-fallback runs (HF turns a byte run that is
# not valid UTF-8 into one U+FFFD per byte) and specials in between.
def decode_only_cases(tok: Tokenizer) -> list[list[int]]:
    b = lambda x: tok.token_to_id(f"<0x{x:02X}>")  # noqa: E731
    s = tok.token_to_id
    hello = tok.encode("Hello", add_special_tokens=False).ids
    return [
        [b(0xE4), b(0xB8), b(0xAD)],                       # 中 as bytes
        [b(0xE4), b(0xB8)],                                # truncated
        [b(0xE4), b(0xB8)] + hello,                        # truncated then text
        [b(0xE4), b(0xB8), b(0xAD), b(0xFF)] + hello,      # valid prefix, invalid run
        [b(0xFF), b(0xFE)],
        [b(0xF0), b(0x9F)] + [s("<eos>")] + [b(0x98), b(0x80)],  # special splits a run
        [b(0xC3)] + [s("<bos>")] + [b(0xA9)],
        hello + [b(0x80)] + hello,
        [s("<bos>"), s("<|turn>")] + hello + [s("<turn|>")],
        [s("<unk>")],
        [b(0x41), b(0x42), b(0x0A)],
    ]


def train() -> Tokenizer:
    corpus = [MULTILINGUAL]
    for path in sorted((ROOT / "tests/fixtures/templates").glob("*.jinja")):
        corpus.append(path.read_text(encoding="utf-8"))
    spec = pathlib.Path("/work/shared/spec/gemma4-text-boundary.md")
    if spec.exists():
        corpus.append(spec.read_text(encoding="utf-8"))
    lines = [line for text in corpus for line in text.splitlines(keepends=True)]

    # Train with word-splitting (so merges stay inside words); the final pipeline below is
    # Gemma's (no splitting).
    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split("▁", "merged_with_next")
    trainer = BpeTrainer(vocab_size=VOCAB_SIZE * 2, special_tokens=[], limit_alphabet=400,
                         show_progress=False)
    tok.train_from_iterator(lines, trainer)
    return tok


def assemble(trained: Tokenizer) -> dict:
    model = json.loads(trained.to_str())["model"]
    trained_vocab = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    merges = [m if isinstance(m, list) else m.split(" ") for m in model["merges"]]

    vocab: dict[str, int] = {}
    for token in SPECIALS + BYTE_TOKENS:
        vocab[token] = len(vocab)
    # The trainer's alphabet (single characters) first, then merge results in rank order.
    merge_results = {a + b for a, b in merges}
    for token, _ in trained_vocab:
        if token not in merge_results and token not in vocab:
            vocab[token] = len(vocab)
    kept_merges = []
    for a, b in merges:
        if len(vocab) >= VOCAB_SIZE:
            break
        if a not in vocab or b not in vocab:
            continue
        kept_merges.append([a, b])
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
    assert len(vocab) == VOCAB_SIZE, len(vocab)

    tok = Tokenizer(models.BPE(vocab=vocab, merges=[tuple(m) for m in kept_merges],
                               byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse()])
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B", special_tokens=[("<bos>", vocab["<bos>"])])
    from tokenizers import AddedToken
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False, lstrip=False,
                                       rstrip=False, single_word=False) for t in SPECIALS])
    assert tok.get_vocab_size(with_added_tokens=True) == VOCAB_SIZE
    return json.loads(tok.to_str())


# Added-token flags Gemma does not use but tokenizer.json allows: a variant of the test tokenizer
# with extra added tokens, and the oracle's ids for strings that exercise them.
FLAG_TOKENS = [
    dict(content="<L>", special=True, lstrip=True),
    dict(content="<R>", special=False, rstrip=True),
    dict(content="<LR>", special=True, lstrip=True, rstrip=True),
    dict(content="qqj", special=False, single_word=True),  # not a BPE token
    dict(content="two words", special=False, normalized=True),
    dict(content="<N>", special=True, normalized=True),
]
FLAG_STRINGS = [
    "x  <L>y", "x<R>   y", "a \t<LR>\n b", "qqj", "a qqj b", "aqqjb", "sqqj", "qqj_x", "(qqj)", "qqj1",
    "two words", "xtwo wordsx", "two  words", "<N> and <L><R>", "\u00e9qqj\u00e9", "\u00e9 qqj.", "\u4e2dqqj",
]


def write_flags_variant(main_path: pathlib.Path) -> None:
    from tokenizers import AddedToken
    tok = Tokenizer.from_file(str(main_path))
    for t in FLAG_TOKENS:
        flags = dict(lstrip=t.get("lstrip", False), rstrip=t.get("rstrip", False),
                     single_word=t.get("single_word", False), normalized=t.get("normalized", False))
        token = AddedToken(t["content"], special=t["special"], **flags)
        (tok.add_special_tokens if t["special"] else tok.add_tokens)([token])
    tok.save(str(OUT / "tokenizer_flags.json"))
    tok = Tokenizer.from_file(str(OUT / "tokenizer_flags.json"))
    cases = [{"text": s, "ids": tok.encode(s, add_special_tokens=False).ids,
              "decoded": tok.decode(tok.encode(s, add_special_tokens=False).ids, skip_special_tokens=False)}
             for s in FLAG_STRINGS]
    (OUT / "corpus_flags.json").write_text(
        "[\n  " + ",\n  ".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n]\n", encoding="utf-8")


def tokenizer_config() -> dict:
    cfg = json.loads(pathlib.Path("/work/shared/gemma4/gemma4-files/tokenizer_config.json")
                     .read_text()) if pathlib.Path("/work/shared/gemma4").exists() else {}
    cfg["chat_template"] = TEMPLATE.read_text(encoding="utf-8")
    return cfg


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    data = assemble(train())
    (OUT / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n",
                                        encoding="utf-8")
    (OUT / "tokenizer_config.json").write_text(
        json.dumps(tokenizer_config(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    tok = Tokenizer.from_file(str(OUT / "tokenizer.json"))
    cases = []
    for text in HARD_STRINGS:
        ids = tok.encode(text, add_special_tokens=False).ids
        cases.append({
            "text": text,
            "ids": ids,
            "ids_with_special": tok.encode(text, add_special_tokens=True).ids,
            "decoded": tok.decode(ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(ids, skip_special_tokens=True),
        })
    decode_cases = [{
        "ids": ids,
        "decoded": tok.decode(ids, skip_special_tokens=False),
        "decoded_skip_special": tok.decode(ids, skip_special_tokens=True),
    } for ids in decode_only_cases(tok)]
    oracle = {"oracle": "tokenizers", "vocab_size": tok.get_vocab_size(with_added_tokens=True),
              "encode": cases, "decode": decode_cases}
    # One case per line: reviewable diffs without a line per id.
    lines = ["{", f' "oracle": "tokenizers", "vocab_size": ' + str(oracle["vocab_size"]) + ',']
    for key in ("encode", "decode"):
        rows = [json.dumps(c, ensure_ascii=False) for c in oracle[key]]
        lines.append(f' "{key}": [\n  ' + ",\n  ".join(rows) + "\n ]" + ("," if key == "encode" else ""))
    lines.append("}")
    (OUT / "corpus.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_flags_variant(OUT / "tokenizer.json")
    print(f"wrote {OUT}: {len(cases)} encode cases, {len(decode_cases)} decode cases")


if __name__ == "__main__":
    main()
