#!/usr/bin/env python3
"""Hugging Face transformers floor for issue 7: the Gemma-4 26B-A4B text decoder shapes, random weights.

The same shapes as the synthetic checkpoint (tools/synth/make_synthetic_checkpoint.py's config.json
text_config: 30 layers [5 sliding, 1 full] x 5, hidden 2816, 128 experts top-8 of width 704, dense
MLP 2112, vocab 262,144, tied embedding), built with transformers' Gemma4ForCausalLM from that
config, RANDOM BF16 WEIGHTS, NO QUANTIZATION (transformers has no NVFP4A16 path on Hopper: every
Linear is bf16, so each decode step reads ~3.6x the bytes of the NVFP4 model; that is what "floor"
means here).  Post-attention / post-feedforward norm gains are set to ~0.02 as in the synthetic
checkpoint, so routing stays spread (../shared/spec/benchmarking.md, "Pitfalls").

Measured, each with torch.cuda.synchronize() around it:
  - decode tokens/s at each batch in --batches: a prompt of --prompt-len random ids per sequence,
    then --new-tokens steps of a manual loop over the model's own cache (DynamicCache), each step
    fed fresh random ids (greedy decoding of a random model falls into repeating one token, which
    would exercise one token's routing only); only the decode steps are timed; tok/s = B x steps / s;
  - prefill tokens/s at each length in --prefill: one forward of a random prompt, logits for the
    last position only, after one untimed warm-up at that length.
Everything stops at --budget-s (items not reached are reported as skipped).

Usage:  python3 tools/bench/hf_floor.py [--device cuda] [--json out.json]
        python3 tools/bench/hf_floor.py --tiny --device cpu     (a quick check of the script itself)
"""
import argparse
import importlib.util
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SYNTH = os.path.join(HERE, "..", "synth", "make_synthetic_checkpoint.py")


def full_text_config():
    """text_config of the synthetic checkpoint (one source for the shapes)."""
    spec = importlib.util.spec_from_file_location("make_synthetic_checkpoint", SYNTH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.config_json()["text_config"]


def tiny_text_config():
    """Same structure, tiny shapes: for checking this script on a CPU."""
    t = full_text_config()
    t.update(hidden_size=64, intermediate_size=48, moe_intermediate_size=16, num_experts=8, top_k_experts=2,
             num_attention_heads=2, num_key_value_heads=2, num_global_key_value_heads=1, head_dim=32,
             global_head_dim=64, num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"],
             vocab_size=512, vocab_size_per_layer_input=512, sliding_window=16)
    return t


def build_model(text_cfg, device):
    from transformers import Gemma4ForCausalLM, Gemma4TextConfig
    cfg = Gemma4TextConfig(**{k: v for k, v in text_cfg.items() if k != "model_type"})
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(device):
            model = Gemma4ForCausalLM(cfg)
    finally:
        torch.set_default_dtype(torch.float32)
    model = model.to(device=device, dtype=torch.bfloat16).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            layer.post_attention_layernorm.weight.fill_(0.02)
            layer.post_feedforward_layernorm.weight.fill_(0.02)
    return model, cfg


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def decode_rate(model, cfg, device, batch, prompt_len, new_tokens):
    gen = torch.Generator(device="cpu").manual_seed(int.from_bytes(os.urandom(4), "little"))
    ids = torch.randint(0, cfg.vocab_size, (batch, prompt_len), generator=gen).to(device)
    steps = [torch.randint(0, cfg.vocab_size, (batch, 1), generator=gen).to(device) for _ in range(new_tokens + 2)]
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
        cache = out.past_key_values
        for s in steps[:2]:  # warm-up steps (untimed)
            out = model(input_ids=s, past_key_values=cache, use_cache=True)
        sync(device)
        t0 = time.perf_counter()
        for s in steps[2:]:
            out = model(input_ids=s, past_key_values=cache, use_cache=True)
        sync(device)
        dt = time.perf_counter() - t0
    assert torch.isfinite(out.logits).all(), "non-finite logits"
    return batch * new_tokens / dt, dt


def prefill_rate(model, cfg, device, length):
    gen = torch.Generator(device="cpu").manual_seed(int.from_bytes(os.urandom(4), "little"))
    with torch.no_grad():
        warm = torch.randint(0, cfg.vocab_size, (1, length), generator=gen).to(device)
        model(input_ids=warm, use_cache=False, logits_to_keep=1)
        ids = torch.randint(0, cfg.vocab_size, (1, length), generator=gen).to(device)
        sync(device)
        t0 = time.perf_counter()
        out = model(input_ids=ids, use_cache=False, logits_to_keep=1)
        sync(device)
        dt = time.perf_counter() - t0
    assert torch.isfinite(out.logits).all(), "non-finite logits"
    return length / dt, dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tiny", action="store_true", help="tiny shapes (checks the script; not a benchmark)")
    ap.add_argument("--batches", default="1,16")
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--prefill", default="2048,8192")
    ap.add_argument("--experts", default="grouped_mm", help="transformers experts implementation ('' = its default)")
    ap.add_argument("--budget-s", type=float, default=85.0)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    t_start = time.perf_counter()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("hf_floor: no CUDA device")
    import transformers
    text_cfg = tiny_text_config() if args.tiny else full_text_config()
    model, cfg = build_model(text_cfg, args.device)
    if args.experts:
        try:
            model.set_experts_implementation(args.experts)
        except Exception as e:  # older/newer transformers: keep its default, say so
            print(f"hf_floor: experts implementation '{args.experts}' not set ({e}); using the default", flush=True)
    params = sum(p.numel() for p in model.parameters())
    gpu = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu"
    print(f"hf_floor: transformers {transformers.__version__}, torch {torch.__version__}, {gpu}; "
          f"{params / 1e9:.2f} B parameters in bf16, random, not quantized; built in "
          f"{time.perf_counter() - t_start:.1f} s", flush=True)
    rows = []

    def over_budget():
        return time.perf_counter() - t_start > args.budget_s

    for b in [int(x) for x in args.batches.split(",") if x]:
        if over_budget():
            rows.append({"what": f"decode batch {b}", "skipped": "budget"})
            continue
        rate, dt = decode_rate(model, cfg, args.device, b, args.prompt_len, args.new_tokens)
        rows.append({"what": f"decode batch {b}", "tok_s": rate, "per_stream": rate / b, "timed_s": dt})
        print(f"hf_floor: decode batch {b}: {rate:.1f} tok/s ({rate / b:.1f} per stream), {dt:.2f} s", flush=True)
    for n in [int(x) for x in args.prefill.split(",") if x]:
        if over_budget():
            rows.append({"what": f"prefill {n}", "skipped": "budget"})
            continue
        rate, dt = prefill_rate(model, cfg, args.device, n)
        rows.append({"what": f"prefill {n}", "tok_s": rate, "timed_s": dt})
        print(f"hf_floor: prefill {n}: {rate:.0f} tok/s ({dt * 1e3:.0f} ms)", flush=True)

    print("\nHF transformers floor (bf16, random weights, not quantized)")
    print(f"{'figure':<18} {'tok/s':>10} {'per stream':>11} {'timed s':>8}")
    for r in rows:
        if "skipped" in r:
            print(f"{r['what']:<18} {'skipped (budget)':>30}")
        else:
            ps = f"{r['per_stream']:.1f}" if "per_stream" in r else ""
            print(f"{r['what']:<18} {r['tok_s']:>10.1f} {ps:>11} {r['timed_s']:>8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"transformers": transformers.__version__, "torch": torch.__version__, "device": gpu,
                       "parameters": params, "tiny": args.tiny, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
