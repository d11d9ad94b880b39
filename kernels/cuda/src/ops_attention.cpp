// Checks and launches for the paged KV cache ops: kv_store, attention and
// the fused qkv_norm_rope_store.
#include <cmath>
#include <cstdint>
#include <string>

#include "attention_decode.hpp"
#include "context.hpp"
#include "fused_norm.hpp"
#include "ops.hpp"
#include "prefill.hpp"
#include "views.hpp"

namespace seatrt::cuda {
namespace {

bool cache_dtype_ok(int32_t d) {
  return d == SEATRT_DTYPE_BF16 || d == SEATRT_DTYPE_F32 || d == SEATRT_DTYPE_F8_E4M3 || d == SEATRT_DTYPE_F16;
}

// Checks a layer's cache tensors: [num_blocks, block_size, kv_heads, head_dim],
// contiguous.  Returns whether V is a separate tensor.
bool check_cache(const std::string& op, const seatrt_kv_layer& c) {
  if (c.struct_size < sizeof(uint32_t)) invalid(op, "cache.struct_size is 0");
  const seatrt_tensor& k = need(op, "cache.k_cache", &c.k_cache);
  if (k.ndim != 4) invalid(op, "k_cache must be [num_blocks, block_size, kv_heads, head_dim]");
  if (!cache_dtype_ok(k.dtype)) unsupported(op, std::string("cache dtype ") + dtype_name(k.dtype));
  need_contiguous(op, "k_cache", k);
  if (c.block_size < 1 || k.shape[1] != c.block_size) invalid(op, "cache block_size does not match k_cache");
  const bool f8 = k.dtype == SEATRT_DTYPE_F8_E4M3;
  if (f8 && !(std::isfinite(c.k_scale) && c.k_scale > 0.0f)) invalid(op, "k_scale must be finite and > 0 for an F8 cache");
  if (!c.v_cache.data) return false;
  if (f8 && !(std::isfinite(c.v_scale) && c.v_scale > 0.0f)) invalid(op, "v_scale must be finite and > 0 for an F8 cache");
  const seatrt_tensor& v = need(op, "cache.v_cache", &c.v_cache);
  if (v.ndim != 4 || v.dtype != k.dtype) invalid(op, "v_cache must match k_cache in dtype and rank");
  for (int i = 0; i < 4; ++i)
    if (v.shape[i] != k.shape[i]) invalid(op, "v_cache must match k_cache in shape");
  need_contiguous(op, "v_cache", v);
  return true;
}

}  // namespace

void kv_store(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_kv_store_args* args) {
  const std::string op = "kv_store";
  if (!args || !args->cache) invalid(op, "args or cache is NULL");
  use_device(ctx);
  const seatrt_kv_layer& c = *args->cache;
  const bool two = check_cache(op, c);
  const auto& k = need(op, "k", args->k);
  need_activation_dtype(op, "k", k);
  const View3 vk = as_view3(op, "k", k);
  const auto& slots = need(op, "slot_mapping", args->slot_mapping);
  need_dtype(op, "slot_mapping", slots, SEATRT_DTYPE_I64);
  need_contiguous(op, "slot_mapping", slots);
  if (numel(slots) != vk.d0) invalid(op, "slot_mapping must have T entries");
  if (vk.d1 != c.k_cache.shape[2] || vk.d2 != c.k_cache.shape[3])
    invalid(op, "k must be [T, kv_heads, head_dim] of the cache");
  if (vk.d1 * vk.d2 > INT32_MAX) unsupported(op, "kv_heads x head_dim above 2^31 elements per token");
  KvStoreProblem p;
  p.k = vk;
  if (two) {
    if (!args->v) invalid(op, "v is missing for a layer with a separate V cache");
    const auto& v = need(op, "v", args->v);
    need_activation_dtype(op, "v", v);
    p.v = as_view3(op, "v", v);
    if (p.v.d0 != vk.d0 || p.v.d1 != vk.d1 || p.v.d2 != vk.d2) invalid(op, "v must have k's shape");
    p.v_cache = c.v_cache.data;
  } else if (args->v) {
    invalid(op, "v given for a layer that stores one tensor");
  }
  p.slots = static_cast<const int64_t*>(slots.data);
  p.k_cache = c.k_cache.data;
  p.cache_dtype = c.k_cache.dtype;
  p.num_slots = c.k_cache.shape[0] * c.k_cache.shape[1];
  // Scales apply to F8 caches only ("1.0 otherwise", kernels.h).
  const bool f8 = p.cache_dtype == SEATRT_DTYPE_F8_E4M3;
  p.k_scale = f8 ? c.k_scale : 1.0f;
  p.v_scale = f8 ? c.v_scale : 1.0f;
  check(launch_kv_store(s, p), "kv_store launch");
}

void attention(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_attention_args* args) {
  const std::string op = "attention";
  if (!args || !args->cache) invalid(op, "args or cache is NULL");
  use_device(ctx);
  const seatrt_attention_args& a = *args;
  const seatrt_kv_layer& c = *a.cache;
  const bool two = check_cache(op, c);
  const auto& q = need(op, "q", a.q);
  const auto& out = need(op, "out", a.out);
  need_activation_dtype(op, "q", q);
  need_activation_dtype(op, "out", out);
  AttentionProblem p;
  p.q = as_view3(op, "q", q);
  p.out = as_view3(op, "out", out);
  if (p.out.d0 != p.q.d0 || p.out.d1 != p.q.d1 || p.out.d2 != p.q.d2) invalid(op, "out must have q's shape");
  p.kv_heads = static_cast<int32_t>(c.k_cache.shape[2]);
  if (p.q.d2 != c.k_cache.shape[3]) invalid(op, "q's head dim differs from the cache's");
  if (p.q.d2 > 512) unsupported(op, "head dim above 512");
  if (p.kv_heads < 1 || p.q.d1 % p.kv_heads != 0) invalid(op, "q heads must be a multiple of kv heads");
  if (a.num_seqs < 1) invalid(op, "num_seqs must be >= 1");
  const auto& qs = need(op, "query_start", a.query_start);
  const auto& sl = need(op, "seq_lens", a.seq_lens);
  const auto& bt = need(op, "block_tables", a.block_tables);
  need_dtype(op, "query_start", qs, SEATRT_DTYPE_I32);
  need_dtype(op, "seq_lens", sl, SEATRT_DTYPE_I32);
  need_dtype(op, "block_tables", bt, SEATRT_DTYPE_I32);
  need_contiguous(op, "query_start", qs);
  need_contiguous(op, "seq_lens", sl);
  if (numel(qs) != a.num_seqs + 1) invalid(op, "query_start must have num_seqs + 1 entries");
  if (numel(sl) != a.num_seqs) invalid(op, "seq_lens must have num_seqs entries");
  if (bt.ndim != 2 || bt.shape[0] != a.num_seqs) invalid(op, "block_tables must be [num_seqs, max_blocks]");
  if (bt.shape[1] > 1 && bt.strides[1] != 1) unsupported(op, "block_tables rows must be contiguous");
  if (a.window < 0) invalid(op, "window must be >= 0");
  if (a.q->shape[1] > 65535) unsupported(op, "more than 65535 q heads");
  p.k_cache = c.k_cache.data;
  p.v_cache = two ? c.v_cache.data : c.k_cache.data;
  p.cache_dtype = c.k_cache.dtype;
  p.block_size = c.block_size;
  p.num_blocks = c.k_cache.shape[0];
  // Scales apply to F8 caches only; a one-tensor layer stored V with k_scale.
  const bool f8 = p.cache_dtype == SEATRT_DTYPE_F8_E4M3;
  p.k_scale = f8 ? c.k_scale : 1.0f;
  p.v_scale = f8 ? (two ? c.v_scale : c.k_scale) : 1.0f;
  p.query_start = static_cast<const int32_t*>(qs.data);
  p.seq_lens = static_cast<const int32_t*>(sl.data);
  p.block_tables = static_cast<const int32_t*>(bt.data);
  p.block_table_stride = bt.strides[0];
  p.max_blocks_per_seq = bt.shape[1];
  p.num_seqs = a.num_seqs;
  p.window = a.window;
  p.scale = a.scale;
  p.softcap = a.softcap;
  // Prefill-shaped batches: the tensor-core kernel (k_attention_prefill.cu)
  // for BF16 q, and for F32 q under the opt-in prefill_bf16 (the kernel
  // rounds q to BF16 as it stages it; P is BF16 in the second MMA either
  // way).  F32 q without the option keeps the exact fp32 kernel.
  const bool q_ok = p.q.dtype == SEATRT_DTYPE_BF16 || (p.q.dtype == SEATRT_DTYPE_F32 && ctx->prefill_bf16);
  if (q_ok && attention_prefill_supported(p, a.max_query_len)) {
    check(launch_attention_prefill(s, p, scratch(ctx, s, attention_prefill_workspace_bytes(p))),
          "attention launch (prefill)");
    return;
  }
  // Decode batches (one row per sequence): the grouped split-K kernel.
  if (attention_decode_supported(p, a.max_query_len)) {
    const int splits = attention_decode_splits(p, a.max_seq_len);
    const size_t bytes = attention_decode_workspace_bytes(p, splits);
    float* ws = bytes ? static_cast<float*>(scratch(ctx, s, bytes)) : nullptr;
    check(launch_attention_decode(s, p, splits, ws), "attention launch (decode)");
    return;
  }
  const int splits = attention_splits(p, a.max_seq_len);
  const size_t ws_bytes = attention_workspace_bytes(p, splits);
  float* ws = ws_bytes ? static_cast<float*>(scratch(ctx, s, ws_bytes)) : nullptr;
  check(launch_attention(s, p, splits, ws), "attention launch");
}

// q's, k's and v's per-head norms, RoPE and the store, checked as
// rms_norm_rope and kv_store check theirs.
void qkv_norm_rope_store(seatrt_kernel_context* ctx, seatrt_stream s, const QkvNormRopeStoreArgs* args) {
  const std::string op = "qkv_norm_rope_store";
  if (!args) invalid(op, "args is NULL");
  if (!args->cache) invalid(op, "cache is NULL");
  use_device(ctx);
  const QkvNormRopeStoreArgs& a = *args;
  const seatrt_kv_layer& c = *a.cache;
  const bool two = check_cache(op, c);
  const auto& q = need(op, "q", a.q);
  const auto& k = need(op, "k", a.k);
  need_activation_dtype(op, "q", q);
  need_activation_dtype(op, "k", k);
  if (k.dtype != q.dtype) invalid(op, "q and k must have one dtype");
  QkvStoreProblem p;
  p.q = as_view3(op, "q", q);
  p.k = as_view3(op, "k", k);
  const int64_t dim = p.q.d2;
  if (p.k.d0 != p.q.d0) invalid(op, "k must have q's T rows");
  if (p.k.d2 != dim) invalid(op, "k must have q's head dim");
  if (dim % 2 != 0) invalid(op, "head dim must be even");
  // The block kernel stages five arrays of D floats in shared memory (48 KiB).
  if (dim > 2048) unsupported(op, "head dim above 2048");
  if (p.k.d1 != c.k_cache.shape[2] || dim != c.k_cache.shape[3])
    invalid(op, "k must be [T, kv_heads, head_dim] of the cache");
  if (p.k.d1 * dim > INT32_MAX) unsupported(op, "kv_heads x head_dim above 2^31 elements per token");
  if (q.data == k.data) invalid(op, "q must not alias k");
  if (a.v) {
    if (!two) invalid(op, "v given for a layer that stores one tensor");
    const auto& v = need(op, "v", a.v);
    need_activation_dtype(op, "v", v);
    if (v.dtype != q.dtype) invalid(op, "v must have q's dtype");
    p.v = as_view3(op, "v", v);
    if (p.v.d0 != p.k.d0 || p.v.d1 != p.k.d1 || p.v.d2 != dim) invalid(op, "v must have k's shape");
    if (q.data == v.data) invalid(op, "q must not alias v");
  }
  if (q.data == c.k_cache.data || (two && q.data == c.v_cache.data)) invalid(op, "q must not alias the cache");
  const auto& pos = need(op, "positions", a.positions);
  need_dtype(op, "positions", pos, SEATRT_DTYPE_I32);
  need_contiguous(op, "positions", pos);
  if (numel(pos) != p.q.d0) invalid(op, "positions must have T entries");
  const auto& f = need(op, "inv_freq", a.inv_freq);
  need_dtype(op, "inv_freq", f, SEATRT_DTYPE_F32);
  need_contiguous(op, "inv_freq", f);
  if (numel(f) != dim / 2) invalid(op, "inv_freq must have D/2 entries");
  const auto& slots = need(op, "slot_mapping", a.slot_mapping);
  need_dtype(op, "slot_mapping", slots, SEATRT_DTYPE_I64);
  need_contiguous(op, "slot_mapping", slots);
  if (numel(slots) != p.q.d0) invalid(op, "slot_mapping must have T entries");
  p.q_gain = optional_gain(op, "q_weight", a.q_weight, dim);
  p.k_gain = optional_gain(op, "k_weight", a.k_weight, dim);
  p.v_gain = optional_gain(op, "v_weight", a.v_weight, dim);
  need_eps(op, a.eps);
  p.eps = a.eps;
  p.positions = static_cast<const int32_t*>(pos.data);
  p.inv_freq = static_cast<const float*>(f.data);
  p.slots = static_cast<const int64_t*>(slots.data);
  p.k_cache = c.k_cache.data;
  p.v_cache = two ? c.v_cache.data : nullptr;
  p.cache_dtype = c.k_cache.dtype;
  p.num_slots = c.k_cache.shape[0] * c.k_cache.shape[1];
  // Scales apply to F8 caches only ("1.0 otherwise", kernels.h).
  const bool f8 = p.cache_dtype == SEATRT_DTYPE_F8_E4M3;
  p.k_scale = f8 ? c.k_scale : 1.0f;
  p.v_scale = f8 ? c.v_scale : 1.0f;
  check(launch_qkv_norm_rope_store(s, p), "qkv_norm_rope_store launch");
}

}  // namespace seatrt::cuda
