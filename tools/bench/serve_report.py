#!/usr/bin/env python3
"""The closing table of tools/bench/run_serve_device.sh: each figure beside its byte limit and its goal.

Reads, from the folder the run wrote (argument 1): bandwidth.json (copy_bandwidth.py),
bench_decode.json and bench_prefill_*.json (`seatrt bench --json`), hf_floor.json (hf_floor.py),
seat.json (`/v1/seat`: the memory plan).
Any of them may be missing (a step that failed or was skipped): its rows say so.

Byte limit of a decode step at batch B (../shared/spec/benchmarking.md; computed here from the
synthetic checkpoint's shapes, tools/synth/make_synthetic_checkpoint.py, never copied):
  every NVFP4 Linear outside the experts (out x in x (1/2 + 1/16) bytes: E2M1 codes + one E4M3
  scale per 16), the routers (BF16), the distinct experts the batch touches (expected under uniform
  routing: E x (1 - (1 - k/E)^B) per layer; the synthetic checkpoint's routing matches it), the
  tied BF16 embedding read as the LM head, and each sequence's fp8 KV cache at the mean context of
  the run (prompt + half the generated tokens; sliding layers read at most the window).
  limit tok/s = B x copy bandwidth / bytes.
"""
import glob
import json
import os
import sys
import importlib.util

HERE = os.path.dirname(os.path.abspath(__file__))
GOALS = {1: 1000, 16: 5500, 32: 8500}  # issue 7: decode tok/s (aggregate)
PREFILL_GOAL = {8192: 30000}           # issue 7: prefill tok/s at 8k


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def text_config():
    spec = importlib.util.spec_from_file_location("synth", os.path.join(HERE, "..", "synth", "make_synthetic_checkpoint.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.config_json()["text_config"]


def step_bytes(t, batch, context):
    """Bytes one decode step of `batch` sequences at `context` tokens each must read."""
    h, heads = t["hidden_size"], t["num_attention_heads"]
    nvfp4 = lambda out_f, in_f: out_f * in_f * (0.5 + 1 / 16)
    dense = experts_per_layer = 0.0
    kv_per_seq = 0.0
    e, k, inter = t["num_experts"], t["top_k_experts"], t["moe_intermediate_size"]
    distinct = e * (1 - (1 - k / e) ** batch)
    for lt in t["layer_types"]:
        full = lt == "full_attention"
        hd = t["global_head_dim"] if full else t["head_dim"]
        kvh = t["num_global_key_value_heads"] if full else t["num_key_value_heads"]
        dense += nvfp4(heads * hd, h) + nvfp4(kvh * hd, h) + nvfp4(h, heads * hd)
        if not full:
            dense += nvfp4(kvh * hd, h)  # v_proj (full layers take V from k_proj)
        dense += 2 * nvfp4(t["intermediate_size"], h) + nvfp4(h, t["intermediate_size"])
        dense += e * h * 2  # router, BF16
        experts_per_layer += distinct * (2 * nvfp4(inter, h) + nvfp4(h, inter))
        positions = context if full else min(context, t["sliding_window"])
        kv_per_seq += positions * kvh * hd * (1 if full and t.get("attention_k_eq_v") else 2)  # fp8: 1 byte
    lm_head = t["vocab_size"] * h * 2
    return dense + experts_per_layer + lm_head + batch * kv_per_seq, distinct


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    bw_j = load(os.path.join(d, "bandwidth.json"))
    bw = bw_j["copy_bandwidth_Bps"] if bw_j else None
    t = text_config()
    print("\n## End-to-end figures (seatrt serve + seatrt bench, synthetic 26B-A4B NVFP4A16, fp8 KV)\n")
    for name in ("gpu.txt", "commit.txt"):
        try:
            print("    " + open(os.path.join(d, name)).read().strip().replace("\n", "\n    "))
        except OSError:
            pass
    print(f"\ncopy bandwidth: {bw / 1e12:.3f} TB/s (measured in this run)" if bw else "\ncopy bandwidth: NOT MEASURED")
    dec = load(os.path.join(d, "bench_decode.json"))
    if dec:
        print(f"decode sweep: prompts of {dec.get('prompt_tokens')} random ids, {dec.get('gen_tokens')} new tokens, "
              f"temperature {dec.get('temperature', 0.8)}")
    print("\n| batch | tok/s aggregate (wall) | B / ITL p50 | decode tok/s per stream | TTFT p50 / p99 ms "
          "| ITL p50 / p99 ms | GB per step | byte limit tok/s | % of limit | goal |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    if dec:
        ctx = dec.get("prompt_tokens", 0) + dec.get("gen_tokens", 0) / 2
        for r in dec["decode"]:
            b = r["concurrency"]
            nbytes, distinct = step_bytes(t, b, ctx)
            limit = b * bw / nbytes if bw else None
            itl_rate = b / (r["itl_p50_ms"] / 1e3) if r["itl_p50_ms"] > 0 else 0
            pct = f"{100 * r['tok_s_total'] / limit:.1f}%" if limit else "-"
            fail = f" ({r['failed']} of {r['requests']} failed)" if r["failed"] else ""
            print(f"| {b} | {r['tok_s_total']:.1f}{fail} | {itl_rate:.1f} | {r['decode_tok_s_stream']:.1f} "
                  f"| {r['ttft_p50_ms']:.0f} / {r['ttft_p99_ms']:.0f} | {r['itl_p50_ms']:.1f} / {r['itl_p99_ms']:.1f} "
                  f"| {nbytes / 1e9:.2f} ({distinct:.0f} experts/layer) | {f'{limit:,.0f}' if limit else '-'} | {pct} "
                  f"| {GOALS.get(b, '')} |")
    else:
        print("| - | decode sweep: NO RESULT (see bench_decode.log / serve.log) | | | | | | | | |")
    print("\n| prompt tokens | prefill tok/s (prompt / TTFT) | TTFT ms | goal |")
    print("|---:|---:|---:|---:|")
    files = sorted(glob.glob(os.path.join(d, "bench_prefill_*.json")),
                   key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    for p in files:
        j = load(p)
        for r in (j or {}).get("prefill", []):
            n = r["prompt_tokens"]
            if r["failed"] == r["requests"]:
                print(f"| {n} | failed: {r.get('first_error', '?')} | | {PREFILL_GOAL.get(n, '')} |")
            else:
                print(f"| {n} | {r['prefill_tok_s']:,.0f} | {r['ttft_p50_ms']:,.0f} | {PREFILL_GOAL.get(n, '')} |")
    if not files:
        print("| - | prefill: NO RESULT | | |")
    seat = load(os.path.join(d, "seat.json"))
    plan = (seat or {}).get("memory_plan")
    if plan:
        gib = lambda b: f"{b / 2 ** 30:.2f} GiB"
        print(f"\nmemory plan: weights {gib(plan['weights'])}, KV pool {gib(plan['kv_pool'])}, step buffers "
              f"{gib(plan['workspace'])}, kernel provider workspace {gib(plan.get('provider_workspace', 0))}; "
              f"free after all: {gib(plan.get('free_after_reserve', 0))}")
        reserved = plan.get("provider_workspace_reserved")
        print(f"  ({reserved['summary']})" if reserved else "  (the provider's workspace was not reserved at load)")
    hf = load(os.path.join(d, "hf_floor.json"))
    print("\n| Hugging Face floor (transformers, bf16 random weights, not quantized) | tok/s | per stream |")
    print("|---|---:|---:|")
    if hf:
        for r in hf["rows"]:
            if "skipped" in r:
                print(f"| {r['what']} | skipped ({r['skipped']}) | |")
            else:
                per_stream = f"{r['per_stream']:.1f}" if "per_stream" in r else ""
                print(f"| {r['what']} | {r['tok_s']:,.1f} | {per_stream} |")
        print(f"\n(transformers {hf['transformers']}, torch {hf['torch']}, {hf['parameters'] / 1e9:.2f} B parameters)")
    else:
        print("| NO RESULT (see hf_floor.log) | | |")


if __name__ == "__main__":
    main()
