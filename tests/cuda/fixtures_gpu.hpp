// Random inputs the CUDA-vs-CPU tests share beyond the harness: NVFP4
// weights (host codes and scales, uploaded to a provider in either layout)
// and paged KV caches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness.hpp"

namespace seatrt_test {

// An NVFP4 weight on the host: E2M1 codes (two per byte), E4M3 scales (one
// per 16 inputs) and the global scale.
struct HostNvfp4 {
  int64_t out, in;
  std::vector<uint8_t> data, scales;
  float global;
};

// Random E2M1 codes, E4M3 scales 2^-3..2^4 (any mantissa), global 100..3000.
HostNvfp4 random_nvfp4(int64_t out, int64_t in);

// `h` uploaded to `p`: in the SM90 tiled layout (BF16 scales, for the CUDA
// provider) when `tiled`, else in the compressed-tensors row-major layout.
seatrt_linear_weight nvfp4_weight(Provider& p, const HostNvfp4& h, bool tiled);

// A dense BF16 weight [out, in] on `p` from `raw` (out * in BF16 values),
// global scale 1.
seatrt_linear_weight dense_bf16_weight(Provider& p, const std::vector<uint8_t>& raw, int64_t out, int64_t in);

// A second CUDA context created with the [kernels.options] text `options`,
// and its own stream.  Tensors come from the harness's default context:
// both contexts use the same device of this process, so device memory is
// shared.
class OptionContext {
 public:
  explicit OptionContext(const char* options);
  ~OptionContext();
  OptionContext(const OptionContext&) = delete;
  OptionContext& operator=(const OptionContext&) = delete;

  // Runs one operation after the default stream's work, and waits for it.
  template <seatrt_op_kind K>
  void run(const typename seatrt::sdk::OpArgs<K>::type& args, const char* what) {
    run_op(seatrt::sdk::make_op<K>(args), what);
  }
  void run_op(const seatrt_op& op, const char* what);
  // Plans the builder's graph in this context, launches it once after the
  // default stream's work and waits for it; returns plan_describe's lines.
  std::string run_graph(seatrt::sdk::GraphBuilder& g, const char* what);

 private:
  seatrt_kernel_context* ctx_ = nullptr;
  seatrt_stream stream_ = nullptr;
};

// E experts' weights, random, uploaded to both providers (row-major layout):
// gate and up inter x hidden, down hidden x inter; *c on CUDA, *p on CPU.
struct Nvfp4Experts {
  std::vector<seatrt_linear_weight> gc, uc, dc, gp, up, dp;
};
Nvfp4Experts random_nvfp4_experts(int32_t E, int64_t hidden, int64_t inter);

// A paged KV cache on both providers holding the same random keys/values.
struct PagedKv {
  Pair k_cache, v_cache;      // num_blocks x block_size x kv_heads x dim each
  seatrt_kv_layer cuda, cpu;  // the layer views (no V cache when one tensor)
};

// Empty K and V caches of `cache_dtype` on both providers, then random
// normal BF16 keys and values (one per slot) stored at `slots` by each
// provider's kv_store.  `one_tensor`: K is also V (no V cache, no values).
PagedKv store_random_kv(int32_t cache_dtype, int64_t num_blocks, int32_t block_size, int64_t kv_heads, int64_t dim,
                        bool one_tensor, const std::vector<int64_t>& slots, float k_scale = 0.5f, float v_scale = 0.25f);

}  // namespace seatrt_test
