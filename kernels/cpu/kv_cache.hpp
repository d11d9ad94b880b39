// One layer's paged KV cache ([num_blocks, block_size, kv_heads, head_dim]
// in BF16, F16, F32 or F8_E4M3 with a per-tensor scale), checked once and
// read/written one (block, offset, head) vector at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "seatrt/seatrt.h"

namespace seatrt::cpu {

class CacheTensor {
 public:
  CacheTensor() = default;
  CacheTensor(const seatrt_tensor& t, float scale);

  int64_t num_blocks() const { return num_blocks_; }
  int64_t head_dim() const { return head_dim_; }
  // dst[0..head_dim) = stored * scale (scale only for F8).
  void load(int64_t block, int64_t offset, int64_t head, float* dst) const;
  // stored = src / scale (F8), rounded to the cache dtype.
  void store(int64_t block, int64_t offset, int64_t head, float* src) const;

 private:
  char* at(int64_t block, int64_t offset, int64_t head) const;
  int32_t dtype_ = 0;
  char* base_ = nullptr;
  int64_t esize_ = 0;
  int64_t num_blocks_ = 0;
  int64_t head_dim_ = 0;
  int64_t stride_[3] = {};
  float scale_ = 1.0f;
};

struct CheckedCache {
  CacheTensor k;
  CacheTensor v;          // == k when the layer stores one tensor
  bool single = false;    // v_cache.data was NULL
  int64_t block_size = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
};

// Validates a layer (shapes, dtypes, scales); `op` names the caller.
CheckedCache check_kv_layer(const seatrt_kv_layer* layer, const char* op);

// Reads slot_mapping ([tokens] integers, slot = block * block_size + offset,
// -1 = skip the token) and checks every slot is inside `cache` and used
// once (two tokens into one slot would make the result depend on write
// order).  `op` names the caller.
std::vector<int64_t> check_slot_mapping(const seatrt_tensor* slot_mapping, int64_t tokens, const CheckedCache& cache,
                                        const char* op);

}  // namespace seatrt::cpu
