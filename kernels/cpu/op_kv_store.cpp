// kv_store: writes the new tokens' K (and V) into their cache slots
// (slot = block * block_size + offset; -1 skips the token).
#include <unordered_set>
#include <vector>

#include "kv_cache.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

void kv_store(Context& ctx, const seatrt_kv_store_args* args_in) {
  constexpr const char* kOp = "kv_store";
  const auto& args = need_args(args_in, kOp);
  const CheckedCache cache = check_kv_layer(args.cache, kOp);
  const seatrt_tensor& k = need_tensor(args.k, kOp, "k");
  need_ndim(k, kOp, "k", 3);
  need_dtype(k, kOp, "k", kActivationDtypes);
  need_dim(k, kOp, "k", 1, cache.kv_heads);
  need_dim(k, kOp, "k", 2, cache.head_dim);
  Rows v_rows;
  if (cache.single) {
    if (args.v) invalid(kOp, "v is given but the layer stores one tensor (cache.v_cache.data is NULL)");
  } else {
    const seatrt_tensor& v = need_tensor(args.v, kOp, "v");
    need_dtype(v, kOp, "v", kActivationDtypes);
    need_same_shape(k, "k", v, "v", kOp);
    v_rows = Rows(v);
  }
  const seatrt_tensor& slots_t = need_tensor(args.slot_mapping, kOp, "slot_mapping");
  need_ndim(slots_t, kOp, "slot_mapping", 1);
  need_dim(slots_t, kOp, "slot_mapping", 0, k.shape[0]);
  const std::vector<int64_t> slots = read_indices(slots_t, kOp, "slot_mapping");
  const int64_t capacity = cache.k.num_blocks() * cache.block_size;
  std::unordered_set<int64_t> seen;
  for (size_t t = 0; t < slots.size(); ++t) {
    const int64_t s = slots[t];
    if (s == -1) continue;
    if (s < 0 || s >= capacity) {
      invalid(kOp, "slot_mapping[" + std::to_string(t) + "] = " + std::to_string(s) +
                       " is outside the cache's " + std::to_string(capacity) + " slots");
    }
    // Two tokens into one slot would make the result depend on write order.
    if (!seen.insert(s).second) {
      invalid(kOp, "slot " + std::to_string(s) + " appears twice in slot_mapping");
    }
  }
  const Rows k_rows(k);  // rows = (token, head)
  const int64_t heads = cache.kv_heads;
  parallel_chunks(ctx.pool, k_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> buf(static_cast<size_t>(cache.head_dim));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t slot = slots[static_cast<size_t>(r / heads)];
      if (slot < 0) continue;
      const int64_t block = slot / cache.block_size;
      const int64_t offset = slot % cache.block_size;
      const int64_t head = r % heads;
      k_rows.load(r, buf.data());
      cache.k.store(block, offset, head, buf.data());
      if (!cache.single) {
        v_rows.load(r, buf.data());
        cache.v.store(block, offset, head, buf.data());
      }
    }
  });
}

}  // namespace seatrt::cpu
