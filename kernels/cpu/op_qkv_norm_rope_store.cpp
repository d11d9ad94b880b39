// qkv_norm_rope_store (ABI 1.4): the per-head work between a layer's q/k/v
// projections and its attention in one call: q <- rope(rmsnorm(q) * q_w) in
// place; k' = rope(rmsnorm(k) * k_w) and v' = rmsnorm(v, or the raw k) *
// v_w, kept in fp32 and stored into the paged cache as kv_store stores F32
// values.  Every step goes through the same code as the single operations
// (row_norm.hpp, rotary.hpp, kv_cache.hpp), so on F32 tensors the result
// equals rms_norm_rope(q), rms_norm(v or k), rms_norm_rope(k), kv_store bit
// for bit.  Every argument is checked before anything is written.
#include <string>
#include <vector>

#include "dtype.hpp"
#include "kv_cache.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "rotary.hpp"
#include "row_norm.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

void qkv_norm_rope_store(Context& ctx, const seatrt_qkv_norm_rope_store_args* args_in) {
  constexpr const char* kOp = "qkv_norm_rope_store";
  const auto& args = need_args(args_in, kOp);
  const seatrt_tensor& q = need_tensor(args.q, kOp, "q");
  need_ndim(q, kOp, "q", 3);
  need_dtype(q, kOp, "q", kActivationDtypes);
  const int64_t tokens = q.shape[0], dim = q.shape[2];
  // k and v: [T, kv_heads, D] in q's dtype (the contract's one dtype).
  const auto need_kv = [&](const seatrt_tensor& t, const char* name) {
    need_ndim(t, kOp, name, 3);
    if (t.dtype != q.dtype)
      invalid(kOp, std::string(name) + " has dtype " + dtype_name(t.dtype) + " but q has " + dtype_name(q.dtype));
    need_dim(t, kOp, name, 0, tokens);
    need_dim(t, kOp, name, 2, dim);
  };
  const seatrt_tensor& k = need_tensor(args.k, kOp, "k");
  need_kv(k, "k");
  const seatrt_tensor* v = args.v ? &need_tensor(args.v, kOp, "v") : nullptr;
  if (v) {
    need_kv(*v, "v");
    need_same_shape(k, "k", *v, "v", kOp);
  }
  const CheckedCache cache = check_kv_layer(args.cache, kOp);
  // As kv_store: a layer that stores one tensor takes no v.
  if (v && !args.cache->v_cache.data) invalid(kOp, "v given for a layer that stores one tensor");
  if (k.shape[1] != cache.kv_heads || dim != cache.head_dim) {
    invalid(kOp, "k has shape " + shape_string(k) + " but the cache holds " + std::to_string(cache.kv_heads) +
                     " heads of " + std::to_string(cache.head_dim));
  }
  // q is written while k, v are read and the cache is written: no sharing.
  if (same_memory(q, k)) invalid(kOp, "q must not alias k");
  if (v && same_memory(q, *v)) invalid(kOp, "q must not alias v");
  if (same_memory(q, args.cache->k_cache)) invalid(kOp, "q must not alias cache.k_cache");
  if (same_memory(q, args.cache->v_cache)) invalid(kOp, "q must not alias cache.v_cache");
  need_eps(args.eps, kOp);
  const seatrt_tensor& positions = need_tensor(args.positions, kOp, "positions");
  const seatrt_tensor& inv_freq = need_tensor(args.inv_freq, kOp, "inv_freq");
  const RotaryInputs rot = read_rotary(kOp, "q", tokens, q.shape[1], dim, positions, inv_freq);
  const seatrt_tensor& slots_t = need_tensor(args.slot_mapping, kOp, "slot_mapping");
  need_dtype(slots_t, kOp, "slot_mapping", {SEATRT_DTYPE_I64});
  const std::vector<int64_t> slots = check_slot_mapping(&slots_t, tokens, cache, kOp);
  const std::vector<float> q_gain = load_gain(args.q_weight, kOp, "q_weight", dim);
  const std::vector<float> k_gain = load_gain(args.k_weight, kOp, "k_weight", dim);
  const std::vector<float> v_gain = load_gain(args.v_weight, kOp, "v_weight", dim);

  const float eps = args.eps;
  const Rows q_rows(q);  // rows = (token, head)
  parallel_chunks(ctx.pool, q_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(dim));
    for (int64_t r = begin; r < end; ++r) {
      q_rows.load(r, row.data());
      norm_row(row, eps, q_gain);
      rotate_row(row, static_cast<float>(rot.pos[static_cast<size_t>(r / rot.heads)]), rot.freq);
      q_rows.store(r, row.data());
    }
  });

  const Rows k_rows(k);
  const Rows v_rows = v ? Rows(*v) : Rows();
  const int64_t kv_heads = cache.kv_heads;
  parallel_chunks(ctx.pool, k_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> kr(static_cast<size_t>(dim)), vr(static_cast<size_t>(dim));
    for (int64_t r = begin; r < end; ++r) {
      const auto token = static_cast<size_t>(r / kv_heads);
      const int64_t slot = slots[token];
      if (slot < 0) continue;  // nothing of this token is stored
      const int64_t block = slot / cache.block_size, offset = slot % cache.block_size, head = r % kv_heads;
      k_rows.load(r, kr.data());
      if (v) v_rows.load(r, vr.data());
      else vr = kr;  // v from the raw k, before its norm
      norm_row(kr, eps, k_gain);
      rotate_row(kr, static_cast<float>(rot.pos[token]), rot.freq);
      cache.k.store(block, offset, head, kr.data());
      if (cache.single) continue;  // the layer keeps k' only
      norm_row(vr, eps, v_gain);
      cache.v.store(block, offset, head, vr.data());
    }
  });
}

}  // namespace seatrt::cpu
