#include "kv_cache.hpp"

#include <cmath>
#include <string>
#include <unordered_set>

#include "dtype.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

CacheTensor::CacheTensor(const seatrt_tensor& t, float scale)
    : dtype_(t.dtype),
      base_(static_cast<char*>(t.data)),
      esize_(static_cast<int64_t>(dtype_size(t.dtype))),
      num_blocks_(t.shape[0]),
      head_dim_(t.shape[3]),
      stride_{t.strides[0], t.strides[1], t.strides[2]},
      scale_(t.dtype == SEATRT_DTYPE_F8_E4M3 ? scale : 1.0f) {}

char* CacheTensor::at(int64_t block, int64_t offset, int64_t head) const {
  return base_ + (block * stride_[0] + offset * stride_[1] + head * stride_[2]) * esize_;
}

void CacheTensor::load(int64_t block, int64_t offset, int64_t head, float* dst) const {
  load_f32(dtype_, at(block, offset, head), dst, head_dim_);
  if (scale_ != 1.0f) {
    for (int64_t i = 0; i < head_dim_; ++i) dst[i] *= scale_;
  }
}

void CacheTensor::store(int64_t block, int64_t offset, int64_t head, float* src) const {
  if (scale_ != 1.0f) {
    for (int64_t i = 0; i < head_dim_; ++i) src[i] /= scale_;
  }
  store_f32(dtype_, src, at(block, offset, head), head_dim_);
}

CheckedCache check_kv_layer(const seatrt_kv_layer* layer, const char* op) {
  if (!layer) invalid(op, "cache is NULL");
  if (layer->struct_size < sizeof(seatrt_kv_layer)) invalid(op, "cache.struct_size is too small");
  if (layer->block_size <= 0) invalid(op, "cache.block_size " + std::to_string(layer->block_size) + " is not positive");
  const seatrt_tensor& k = need_tensor(&layer->k_cache, op, "cache.k_cache");
  need_ndim(k, op, "cache.k_cache", 4);
  need_dtype(k, op, "cache.k_cache",
             {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32, SEATRT_DTYPE_F16, SEATRT_DTYPE_F8_E4M3});
  need_dim(k, op, "cache.k_cache", 1, layer->block_size);
  const bool f8 = k.dtype == SEATRT_DTYPE_F8_E4M3;
  if (f8 && !(std::isfinite(layer->k_scale) && layer->k_scale > 0.0f)) {
    invalid(op, "cache.k_scale " + std::to_string(layer->k_scale) + " must be finite and > 0 for an F8 cache");
  }
  CheckedCache c;
  c.block_size = layer->block_size;
  c.kv_heads = k.shape[2];
  c.head_dim = k.shape[3];
  c.k = CacheTensor(k, layer->k_scale);
  c.single = layer->v_cache.data == nullptr;
  if (c.single) {
    c.v = c.k;
    return c;
  }
  const seatrt_tensor& v = need_tensor(&layer->v_cache, op, "cache.v_cache");
  need_same_shape(k, "cache.k_cache", v, "cache.v_cache", op);
  if (v.dtype != k.dtype) {
    invalid(op, "cache.v_cache has dtype " + dtype_name(v.dtype) + " but cache.k_cache has " + dtype_name(k.dtype));
  }
  if (f8 && !(std::isfinite(layer->v_scale) && layer->v_scale > 0.0f)) {
    invalid(op, "cache.v_scale " + std::to_string(layer->v_scale) + " must be finite and > 0 for an F8 cache");
  }
  c.v = CacheTensor(v, layer->v_scale);
  return c;
}

std::vector<int64_t> check_slot_mapping(const seatrt_tensor* slot_mapping, int64_t tokens, const CheckedCache& cache,
                                        const char* op) {
  const seatrt_tensor& t = need_tensor(slot_mapping, op, "slot_mapping");
  need_ndim(t, op, "slot_mapping", 1);
  need_dim(t, op, "slot_mapping", 0, tokens);
  std::vector<int64_t> slots = read_indices(t, op, "slot_mapping");
  const int64_t capacity = cache.k.num_blocks() * cache.block_size;
  std::unordered_set<int64_t> seen;
  for (size_t i = 0; i < slots.size(); ++i) {
    const int64_t s = slots[i];
    if (s == -1) continue;
    if (s < 0 || s >= capacity) {
      invalid(op, "slot_mapping[" + std::to_string(i) + "] = " + std::to_string(s) + " is outside the cache's " +
                      std::to_string(capacity) + " slots");
    }
    if (!seen.insert(s).second) invalid(op, "slot " + std::to_string(s) + " appears twice in slot_mapping");
  }
  return slots;
}

}  // namespace seatrt::cpu
