#!/usr/bin/env python3
"""Writes a tiny random "tinydense" checkpoint (Python 3 standard library
only) and computes its logits with a plain-Python forward pass, the
independent reference the example's test compares seatrt with.

  make_tinydense.py DIR [--seed N]          config.json, model.safetensors,
                                            tokenizer.json, tokenizer_config.json
  make_tinydense.py DIR --logits 5,17,42    the last position's logits (JSON)
"""
import argparse
import json
import math
import os
import random
import struct

SHAPE = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 512,
         "rms_norm_eps": 1e-6, "rope_theta": 10000.0}
SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
CHARS = ["\u2581"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + list(".,!?")


def vocabulary():
    """Specials, the 256 byte-fallback tokens, then single characters (no merges)."""
    return SPECIALS + ["<0x%02X>" % b for b in range(256)] + CHARS


def tokenizer_json():
    vocab = vocabulary()
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(SPECIALS)]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
            "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                              "invert": False},
            "post_processor": None,
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"}]},
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": True,
                      "ignore_merges": False, "vocab": {t: i for i, t in enumerate(vocab)}, "merges": []}}


def config():
    return dict(model_type="tinydense", architectures=["TinyDenseForCausalLM"], vocab_size=len(vocabulary()),
                tie_word_embeddings=True, torch_dtype="float32", **SHAPE)


def tensor_shapes(c):
    h, i = c["hidden_size"], c["intermediate_size"]
    q, kv = c["num_attention_heads"] * c["head_dim"], c["num_key_value_heads"] * c["head_dim"]
    shapes = {"model.embed_tokens.weight": [c["vocab_size"], h], "model.norm.weight": [h]}
    for l in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % l
        shapes.update({p + "input_layernorm.weight": [h], p + "post_attention_layernorm.weight": [h],
                       p + "self_attn.q_proj.weight": [q, h], p + "self_attn.q_proj.bias": [q],
                       p + "self_attn.k_proj.weight": [kv, h], p + "self_attn.k_proj.bias": [kv],
                       p + "self_attn.v_proj.weight": [kv, h], p + "self_attn.v_proj.bias": [kv],
                       p + "self_attn.o_proj.weight": [h, q], p + "mlp.gate_proj.weight": [i, h],
                       p + "mlp.up_proj.weight": [i, h], p + "mlp.down_proj.weight": [h, i]})
    return shapes


def random_weights(c, seed):
    """Values rounded to float32, so both sides start from the same numbers."""
    rng = random.Random(seed)
    f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
    weights = {}
    for name, shape in tensor_shapes(c).items():
        n = math.prod(shape)
        if name.endswith("norm.weight"):
            values = [1.0 + rng.uniform(-0.2, 0.2) for _ in range(n)]
        elif name.endswith(".bias"):
            values = [rng.uniform(-0.1, 0.1) for _ in range(n)]
        else:  # matrices: spread ~1/sqrt(in), the embedding wider so logits differ clearly
            bound = 1.0 if "embed" in name else 1.7 / math.sqrt(shape[1])
            values = [rng.uniform(-bound, bound) for _ in range(n)]
        weights[name] = (shape, [f32(v) for v in values])
    return weights


def write_safetensors(path, weights):
    """The format: u64 header length, a JSON header, then the raw data."""
    header, offset = {}, 0
    for name, (shape, values) in weights.items():
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + 4 * len(values)]}
        offset += 4 * len(values)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for shape, values in weights.values():
            f.write(struct.pack("<%df" % len(values), *values))


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: (v["shape"], list(struct.unpack_from("<%df" % (math.prod(v["shape"])), data, v["data_offsets"][0])))
            for k, v in header.items() if k != "__metadata__"}


def write_checkpoint(directory, seed=1):
    os.makedirs(directory, exist_ok=True)
    c = config()
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    with open(os.path.join(directory, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(), f, ensure_ascii=False)
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"}, f)
    write_safetensors(os.path.join(directory, "model.safetensors"), random_weights(c, seed))


# ------------------------------------------------------------ the reference

def matvec(m, rows, cols, x, bias=None):
    out = [sum(m[r * cols + j] * x[j] for j in range(cols)) for r in range(rows)]
    return [o + b for o, b in zip(out, bias)] if bias else out


def rms_norm(x, w, eps):
    s = 1.0 / math.sqrt(sum(v * v for v in x) / len(x) + eps)
    return [v * s * g for v, g in zip(x, w)]


def rope(vec, heads, d, pos, theta):
    """NeoX pairing: element i turns with element i + d/2 of the same head."""
    out = list(vec)
    for hd in range(heads):
        for i in range(d // 2):
            angle = pos * theta ** (-2.0 * i / d)
            a, b = vec[hd * d + i], vec[hd * d + i + d // 2]
            out[hd * d + i] = a * math.cos(angle) - b * math.sin(angle)
            out[hd * d + i + d // 2] = b * math.cos(angle) + a * math.sin(angle)
    return out


def last_logits(directory, ids):
    """Logits of the last of `ids` (positions 0..n-1), in double precision."""
    with open(os.path.join(directory, "config.json")) as f:
        c = json.load(f)
    w = {k: v[1] for k, v in read_safetensors(os.path.join(directory, "model.safetensors")).items()}
    h, inter, eps = c["hidden_size"], c["intermediate_size"], c["rms_norm_eps"]
    nh, nkv, d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    emb = w["model.embed_tokens.weight"]
    xs = [emb[t * h:(t + 1) * h] for t in ids]
    for l in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % l
        normed = [rms_norm(x, w[p + "input_layernorm.weight"], eps) for x in xs]
        proj = lambda n, rows, x: matvec(w[p + "self_attn.%s_proj.weight" % n], rows, h, x,
                                         w[p + "self_attn.%s_proj.bias" % n])
        qs = [rope(proj("q", nh * d, x), nh, d, t, c["rope_theta"]) for t, x in enumerate(normed)]
        ks = [rope(proj("k", nkv * d, x), nkv, d, t, c["rope_theta"]) for t, x in enumerate(normed)]
        vs = [proj("v", nkv * d, x) for x in normed]
        for t in range(len(xs)):
            attn = []
            for hq in range(nh):
                kvh = hq // (nh // nkv)
                q = qs[t][hq * d:(hq + 1) * d]
                scores = [sum(a * b for a, b in zip(q, ks[j][kvh * d:(kvh + 1) * d])) / math.sqrt(d)
                          for j in range(t + 1)]
                top = max(scores)
                e = [math.exp(s - top) for s in scores]
                attn += [sum(e[j] * vs[j][kvh * d + i] for j in range(t + 1)) / sum(e) for i in range(d)]
            o = matvec(w[p + "self_attn.o_proj.weight"], h, nh * d, attn)
            xs[t] = [a + b for a, b in zip(xs[t], o)]
        for t in range(len(xs)):
            n = rms_norm(xs[t], w[p + "post_attention_layernorm.weight"], eps)
            g = matvec(w[p + "mlp.gate_proj.weight"], inter, h, n)
            u = matvec(w[p + "mlp.up_proj.weight"], inter, h, n)
            a = [gv / (1.0 + math.exp(-gv)) * uv for gv, uv in zip(g, u)]
            xs[t] = [x + y for x, y in zip(xs[t], matvec(w[p + "mlp.down_proj.weight"], h, inter, a))]
    final = rms_norm(xs[-1], w["model.norm.weight"], eps)
    return matvec(emb, c["vocab_size"], h, final)


def log_softmax(logits):
    top = max(logits)
    z = top + math.log(sum(math.exp(v - top) for v in logits))
    return [v - z for v in logits]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--logits", help="comma-separated token ids: print the last position's logits")
    a = ap.parse_args()
    if a.logits:
        print(json.dumps(last_logits(a.dir, [int(t) for t in a.logits.split(",")])))
    else:
        write_checkpoint(a.dir, a.seed)
