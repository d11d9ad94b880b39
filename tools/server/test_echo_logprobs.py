"""Completions' echo with logprobs (prompt logprobs, as evaluation harnesses
score a served model) on the demo seat's tiny Gemma-4 fixture, checked
against Hugging Face transformers: tests/fixtures/gemma4-tiny-moe/
reference.safetensors holds HF's logits at every position of four prompts
(fp32; the seat runs with an fp32 KV cache here so the two agree to ~1e-5).

Every prompt token after the first must carry HF's log-softmax at that
token from the position before it, the first a null; the top alternatives
must be HF's likeliest (up to near-ties); generation then goes on as
without echo; echo without logprobs prepends the prompt text alone; and
max_tokens 0 returns the prompt alone."""

import json
import math
import os
import struct
import unittest

from seat_harness import ROOT, DemoSeat

FIXTURE = os.path.join(ROOT, "tests/fixtures/gemma4-tiny-moe")


def read_f32_tensors(path, names):
    """The F32 tensors `names` of a safetensors file, as lists of rows."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name in names:
            meta = header[name]
            assert meta["dtype"] == "F32", meta
            begin, end = meta["data_offsets"]
            f.seek(base + begin)
            flat = struct.unpack("<%df" % ((end - begin) // 4), f.read(end - begin))
            rows, cols = meta["shape"]
            out[name] = [flat[r * cols:(r + 1) * cols] for r in range(rows)]
        return out


def log_softmax(row):
    m = max(row)
    lse = m + math.log(sum(math.exp(v - m) for v in row))
    return [v - lse for v in row]


class EchoLogprobsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(FIXTURE, "reference.json")) as f:
            cls.reference = json.load(f)
        names = ["p%d.logits" % i for i in range(len(cls.reference["prompts"]))]
        cls.logits = read_f32_tensors(os.path.join(FIXTURE, "reference.safetensors"), names)
        cls.seat = DemoSeat()
        with open(cls.seat.seat_file) as f:
            text = f.read()
        with open(cls.seat.seat_file, "w") as f:
            f.write(text.replace('kv_cache_dtype = "bf16"', 'kv_cache_dtype = "fp32"'))
        cls.seat.start()
        cls.client = cls.seat.client()

    @classmethod
    def tearDownClass(cls):
        code = cls.seat.stop()
        cls.seat.log.close()
        cls.seat.tmp.cleanup()
        assert code == 0, code

    def test_prompt_logprobs_match_hugging_face(self):
        k = 5
        for i, prompt in enumerate(self.reference["prompts"]):
            r = self.client.completions.create(model="demo", prompt=prompt, max_tokens=3, temperature=0,
                                               echo=True, logprobs=k)
            lp = r.choices[0].logprobs
            n = len(prompt)
            self.assertEqual(len(lp.tokens), n + 3, i)
            self.assertIsNone(lp.token_logprobs[0])
            self.assertIsNone(lp.top_logprobs[0])
            ref = self.logits["p%d.logits" % i]
            for pos in range(1, n):
                want = log_softmax(ref[pos - 1])
                self.assertAlmostEqual(lp.token_logprobs[pos], want[prompt[pos]], delta=2e-4, msg=(i, pos))
                top = lp.top_logprobs[pos]
                # HF's k likeliest (a near-tie at the k-th place may be
                # swapped), and the prompt token itself as the legacy API
                # lists the chosen token always.
                ranked = sorted(range(len(want)), key=lambda t: -want[t])
                kth = want[ranked[k - 1]]
                self.assertIn(lp.tokens[pos], top)
                others = [v for t, v in top.items() if t != lp.tokens[pos]]
                self.assertGreaterEqual(len(others), k - 1)
                for value in others:
                    self.assertGreaterEqual(value, kth - 2e-4, (i, pos))
                self.assertAlmostEqual(max(top.values()), want[ranked[0]], delta=2e-4)
            # The continuation is HF's greedy one, as without echo.
            self.assertEqual(lp.tokens[n:], [self.decode_one(t) for t in self.reference["greedy"][i][:3]], i)
            plain = self.client.completions.create(model="demo", prompt=prompt, max_tokens=3, temperature=0)
            self.assertTrue(r.choices[0].text.endswith(plain.choices[0].text))

    def decode_one(self, token_id):
        from seat_harness import _tok
        return _tok.decode([token_id], skip_special_tokens=False)

    def test_echo_text_and_max_tokens_zero(self):
        r = self.client.completions.create(model="demo", prompt="Once upon a time", max_tokens=4, temperature=0,
                                           echo=True)
        plain = self.client.completions.create(model="demo", prompt="Once upon a time", max_tokens=4,
                                               temperature=0)
        self.assertEqual(r.choices[0].text, "Once upon a time" + plain.choices[0].text)
        self.assertEqual(r.usage.completion_tokens, plain.usage.completion_tokens)
        only = self.client.completions.create(model="demo", prompt="Once upon a time", max_tokens=0, echo=True,
                                              logprobs=1)
        self.assertEqual(only.choices[0].text, "Once upon a time")
        self.assertEqual(only.choices[0].finish_reason, "length")
        self.assertEqual(only.usage.completion_tokens, 0)
        self.assertEqual(len(only.choices[0].logprobs.tokens), only.usage.prompt_tokens)
        # Streamed: the prompt (with its logprobs) in the first chunk, then the tokens.
        chunks = list(self.client.completions.create(model="demo", prompt="Once upon a time", max_tokens=4,
                                                     temperature=0, echo=True, logprobs=2, stream=True))
        self.assertEqual(chunks[0].choices[0].text, "Once upon a time")
        self.assertEqual(len(chunks[0].choices[0].logprobs.tokens), only.usage.prompt_tokens)
        self.assertEqual("".join(c.choices[0].text for c in chunks if c.choices), r.choices[0].text)

    def test_max_tokens_zero_needs_echo(self):
        status, text, _ = self.seat.post("/v1/completions", {"model": "demo", "prompt": "x", "max_tokens": 0})
        self.assertEqual(status, 400, text)
        self.assertEqual(json.loads(text)["error"]["param"], "max_tokens")
        status, text, _ = self.seat.post("/v1/chat/completions", {"model": "demo", "max_tokens": 0,
                                                                  "messages": [{"role": "user", "content": "x"}]})
        self.assertEqual(status, 400, text)
        self.assertEqual(json.loads(text)["error"]["param"], "max_tokens")


if __name__ == "__main__":
    unittest.main(verbosity=2)
