// kv_store: writes the new tokens' K (and V) into their cache slots
// (slot = block * block_size + offset; -1 skips the token).
#include <vector>

#include "kv_cache.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

void kv_store(Context& ctx, const seatrt_kv_store_args& args) {
  constexpr const char* kOp = "kv_store";
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
  const std::vector<int64_t> slots = check_slot_mapping(args.slot_mapping, k.shape[0], cache, kOp);
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
