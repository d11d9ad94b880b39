#!/usr/bin/env python3
"""Full-size synthetic Gemma-4 26B-A4B checkpoint in the NVFP4A16 compressed-tensors format.

Issue 7 needs a checkpoint with the exact 26B-A4B shapes to run the CUDA provider end to end
(long decode without non-finite values, speed at the real byte counts).  The real weights cannot be
fetched on the device machine, so this script draws random ones there, on the GPU, with torch.
Run it on the device machine only; NEVER commit its output (~16 GB).

Format (the one llm-compressor writes and plugins/quant-nvfp4a16 reads, see
tests/fixtures/gemma4-tiny-moe for a real, tiny instance):
  - every Linear of the text decoder (q/k/v/o, dense MLP gate/up/down, per-expert
    experts.{e}.{gate,up,down}_proj) as `weight_packed` U8 [out, in/2] (two E2M1 codes per byte,
    low nibble = even column), `weight_scale` F8_E4M3 [out, in/16], `weight_global_scale` F32 [1];
    w = e2m1 * scale / global_scale;
  - routers (`router.proj.weight` BF16 [128, 2816]) and lm_head are not quantized (ignore list);
    the LM head is the tied BF16 embedding;
  - norms, `router.scale`, `router.per_expert_scale`, `layer_scalar` BF16.
Shapes (../shared/spec/gemma4-architecture.md §1.2, §2): 30 layers, pattern [5 sliding, 1 full] x 5,
hidden 2816, 16 heads; sliding layers 8 KV heads x 256 (q 4096, k/v 2048), full layers 2 KV heads
x 512 with K = V (q 8192, k 1024, no v_proj); dense MLP 2112; 128 experts, top 8, expert width 704;
vocab 262144; window 1024.

Weight statistics (chosen so that a random model behaves like a model at all):
  - Linear weights have RMS ~ 1/sqrt(in) (random E2M1 codes have RMS 2.93; the per-group E4M3
    scales are drawn around global_scale / (2.93 sqrt(in)), x U[0.5, 1.5]);
  - embedding N(0, 0.03^2) (tools/fixtures/README.md: a large tied embedding makes greedy decode
    repeat the last token); final norm gain ~10;
  - post_attention_layernorm / post_feedforward_layernorm gains ~0.02
    (../shared/spec/benchmarking.md "Pitfalls": with gains of 1 random attention collapses the
    residual stream within a few layers and the router sends every token to the same few
    experts, which makes batched decode and prefill look far cheaper than they are);
  - k_norm gain ~0.25 (attention scale is 1.0: k_norm sets the softmax temperature), other norm
    gains ~1; layer_scalar U[0.9, 1.1]; router.proj N(0, 1), per_expert_scale U[0.5, 1.5].

Usage (device machine):  python3 tools/synth/make_synthetic_checkpoint.py --out /dev/shm/synth [--seed N]
"""
import argparse
import concurrent.futures
import json
import os
import sys
import time

import torch
from safetensors.torch import save_file

HIDDEN = 2816
HEADS = 16
LAYERS = 30
SLIDING = dict(kv_heads=8, head_dim=256)
FULL = dict(kv_heads=2, head_dim=512)
DENSE_INTER = 2112
EXPERTS = 128
TOP_K = 8
EXPERT_INTER = 704
VOCAB = 262144
WINDOW = 1024
GROUP = 16
GLOBAL_SCALE = 448.0  # any positive value works: the scales are drawn relative to it
E2M1_RMS = 8.5625 ** 0.5  # sqrt(mean of squares of the 16 E2M1 values)
PREFIX = "model.language_model."


def layer_types():
    return ["full_attention" if (i % 6) == 5 else "sliding_attention" for i in range(LAYERS)]


def set_layers(n):
    """Fewer layers for a quick check of the format (e.g. on a CPU): not the 26B-A4B shapes."""
    global LAYERS
    LAYERS = n


def nvfp4_linear(name, out_f, in_f, gen, dev):
    """The three tensors of one NVFP4 Linear, drawn on the GPU."""
    packed = torch.randint(0, 256, (out_f, in_f // 2), dtype=torch.uint8, device=dev, generator=gen)
    base = GLOBAL_SCALE / (E2M1_RMS * in_f ** 0.5)
    scale = base * (0.5 + torch.rand((out_f, in_f // GROUP), device=dev, generator=gen))
    return {
        name + ".weight_packed": packed,
        name + ".weight_scale": scale.to(torch.float8_e4m3fn),
        name + ".weight_global_scale": torch.tensor([GLOBAL_SCALE], dtype=torch.float32, device=dev),
    }


def gain(n, centre, gen, dev):
    g = centre * (1.0 + 0.2 * torch.randn(n, device=dev, generator=gen))
    return g.clamp_min(centre * 0.1).to(torch.bfloat16)


def layer_tensors(i, gen, dev):
    full = layer_types()[i] == "full_attention"
    g = FULL if full else SLIDING
    q_out, kv_out = HEADS * g["head_dim"], g["kv_heads"] * g["head_dim"]
    p = f"{PREFIX}layers.{i}."
    t = {}
    t.update(nvfp4_linear(p + "self_attn.q_proj", q_out, HIDDEN, gen, dev))
    t.update(nvfp4_linear(p + "self_attn.k_proj", kv_out, HIDDEN, gen, dev))
    if not full:
        t.update(nvfp4_linear(p + "self_attn.v_proj", kv_out, HIDDEN, gen, dev))
    t.update(nvfp4_linear(p + "self_attn.o_proj", HIDDEN, q_out, gen, dev))
    t.update(nvfp4_linear(p + "mlp.gate_proj", DENSE_INTER, HIDDEN, gen, dev))
    t.update(nvfp4_linear(p + "mlp.up_proj", DENSE_INTER, HIDDEN, gen, dev))
    t.update(nvfp4_linear(p + "mlp.down_proj", HIDDEN, DENSE_INTER, gen, dev))
    for e in range(EXPERTS):
        x = f"{p}experts.{e}."
        t.update(nvfp4_linear(x + "gate_proj", EXPERT_INTER, HIDDEN, gen, dev))
        t.update(nvfp4_linear(x + "up_proj", EXPERT_INTER, HIDDEN, gen, dev))
        t.update(nvfp4_linear(x + "down_proj", HIDDEN, EXPERT_INTER, gen, dev))
    t[p + "input_layernorm.weight"] = gain(HIDDEN, 1.0, gen, dev)
    t[p + "post_attention_layernorm.weight"] = gain(HIDDEN, 0.02, gen, dev)
    t[p + "pre_feedforward_layernorm.weight"] = gain(HIDDEN, 1.0, gen, dev)
    t[p + "post_feedforward_layernorm.weight"] = gain(HIDDEN, 0.02, gen, dev)
    t[p + "post_feedforward_layernorm_1.weight"] = gain(HIDDEN, 1.0, gen, dev)
    t[p + "pre_feedforward_layernorm_2.weight"] = gain(HIDDEN, 1.0, gen, dev)
    t[p + "post_feedforward_layernorm_2.weight"] = gain(HIDDEN, 1.0, gen, dev)
    t[p + "self_attn.q_norm.weight"] = gain(g["head_dim"], 1.0, gen, dev)
    t[p + "self_attn.k_norm.weight"] = gain(g["head_dim"], 0.25, gen, dev)
    t[p + "layer_scalar"] = (0.9 + 0.2 * torch.rand(1, device=dev, generator=gen)).to(torch.bfloat16)
    t[p + "router.proj.weight"] = torch.randn(EXPERTS, HIDDEN, device=dev, generator=gen).to(torch.bfloat16)
    t[p + "router.scale"] = gain(HIDDEN, 1.0, gen, dev)
    t[p + "router.per_expert_scale"] = (0.5 + torch.rand(EXPERTS, device=dev, generator=gen)).to(torch.bfloat16)
    return t


def config_json():
    ignore = []
    for i in range(LAYERS):
        ignore += [f"{PREFIX}layers.{i}.router", f"{PREFIX}layers.{i}.router.proj"]
    ignore.append("lm_head")
    text = {
        "attention_bias": False, "attention_dropout": 0.0, "attention_k_eq_v": True, "bos_token_id": 2,
        "dtype": "bfloat16", "enable_moe_block": True, "eos_token_id": 1, "final_logit_softcapping": 30.0,
        "global_head_dim": FULL["head_dim"], "head_dim": SLIDING["head_dim"],
        "hidden_activation": "gelu_pytorch_tanh", "hidden_size": HIDDEN, "hidden_size_per_layer_input": 0,
        "initializer_range": 0.02, "intermediate_size": DENSE_INTER, "layer_types": layer_types(),
        "max_position_embeddings": 262144, "model_type": "gemma4_text", "moe_intermediate_size": EXPERT_INTER,
        "num_attention_heads": HEADS, "num_experts": EXPERTS, "num_global_key_value_heads": FULL["kv_heads"],
        "num_hidden_layers": LAYERS, "num_key_value_heads": SLIDING["kv_heads"], "num_kv_shared_layers": 0,
        "pad_token_id": 0, "rms_norm_eps": 1e-06,
        "rope_parameters": {
            "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0, "rope_type": "proportional"},
            "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"},
        },
        "sliding_window": WINDOW, "tie_word_embeddings": True, "top_k_experts": TOP_K,
        "use_bidirectional_attention": "vision", "use_cache": True, "use_double_wide_mlp": False,
        "vocab_size": VOCAB, "vocab_size_per_layer_input": VOCAB,
    }
    weights = {
        "actorder": None, "block_structure": None, "dynamic": False, "group_size": GROUP, "num_bits": 4,
        "observer": "memoryless_minmax", "observer_kwargs": {}, "scale_dtype": "torch.float8_e4m3fn",
        "strategy": "tensor_group", "symmetric": True, "type": "float", "zp_dtype": None,
    }
    quant = {
        "config_groups": {"group_0": {"format": "nvfp4-pack-quantized", "input_activations": None,
                                      "output_activations": None, "targets": ["Linear"], "weights": weights}},
        "format": "nvfp4-pack-quantized", "global_compression_ratio": None, "ignore": ignore,
        "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed",
        "sparsity_config": {}, "transform_config": {}, "version": "0.19.0",
    }
    return {"architectures": ["Gemma4ForConditionalGeneration"], "dtype": "bfloat16", "model_type": "gemma4",
            "quantization_config": quant, "text_config": text, "tie_word_embeddings": True,
            "note": "SYNTHETIC random weights (tools/synth/make_synthetic_checkpoint.py); not a model"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=None, help="default: from the OS random source")
    ap.add_argument("--writers", type=int, default=8, help="shards written in parallel")
    ap.add_argument("--device", default="cuda", help="where weights are drawn (cpu only for a quick format check)")
    ap.add_argument("--layers", type=int, default=LAYERS, help="fewer layers only for a quick format check")
    args = ap.parse_args()
    set_layers(args.layers)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("make_synthetic_checkpoint: needs a CUDA GPU (weights are drawn on the device)")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    os.makedirs(args.out, exist_ok=True)
    dev = torch.device(args.device)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    t0 = time.time()
    nshards = LAYERS + 1
    weight_map, total_bytes = {}, 0

    def write(tensors, shard):
        save_file(tensors, os.path.join(args.out, shard), metadata={"format": "pt"})

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.writers) as pool:
        futures = []
        for s in range(nshards):
            shard = f"model-{s + 1:05d}-of-{nshards:05d}.safetensors"
            if s == 0:
                t = {PREFIX + "embed_tokens.weight": (0.03 * torch.randn(VOCAB, HIDDEN, device=dev, generator=gen)).to(torch.bfloat16),
                     PREFIX + "norm.weight": gain(HIDDEN, 10.0, gen, dev)}
            else:
                t = layer_tensors(s - 1, gen, dev)
            cpu = {k: v.cpu().contiguous() for k, v in t.items()}
            del t
            for k, v in cpu.items():
                weight_map[k] = shard
                total_bytes += v.numel() * v.element_size()
            futures.append(pool.submit(write, cpu, shard))
            # Keep host memory bounded: at most `writers` shards waiting.
            while sum(not f.done() for f in futures) >= args.writers:
                concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_COMPLETED)
        for f in futures:
            f.result()
    with open(os.path.join(args.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total_bytes}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=1)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config_json(), f, indent=2)
    print(f"synthetic checkpoint: {args.out}, seed {seed}, {len(weight_map)} tensors, {total_bytes / 1e9:.2f} GB "
          f"in {nshards} shards, {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
