// The CUDA provider's context: the device it was made for, per-stream
// scratch memory, and the device-side weight tables MoE reads.  Plus the
// conversion of CUDA errors into ABI statuses.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "launch.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::cuda {
class Profiler;  // profile.hpp

// The planner's [kernels.options] (plan.cpp, README.md).
struct PlanOptions {
  bool fuse = true;            // fuse = false: every node runs as its own operation
  int32_t streams = 2;         // 2: independent branches on a second stream
  int64_t pair_min_rows = 65;  // rows from which a MoE layer's end is one add_rms_norm_pair
};
}  // namespace seatrt::cuda

struct seatrt_kernel_context {
  int32_t device = 0;
  // Per-op GPU timer, owned; NULL unless [kernels.options] profile = true
  // (profile.hpp).  A plain pointer: .cu files include this header without
  // the profiler's definition.
  seatrt::cuda::Profiler* profiler = nullptr;
  // [kernels.options] prefill_bf16 = true: prefill-shaped F32 activations are
  // rounded to BF16 for the tensor-core kernels (convert.hpp, README.md).
  bool prefill_bf16 = false;
  // [kernels.options] lm_head_gemm (default on since 2026-12-05: the LM head
  // 1.49 -> 0.43 ms at 32 rows, graph step -4 to -6% at batch 1-32, H200):
  // dense BF16 weights at decode rows of F32 x on the prefill GEMM core
  // (GemvProblem::plane_out, k_linear.cu).
  bool lm_head_gemm = true;
  seatrt::cuda::PlanOptions plan_options;
  std::mutex mutex;  // guards the maps below
  // Scratch memory per stream (streams may run concurrently).
  struct Scratch {
    void* ptr = nullptr;
    size_t bytes = 0;
    // Buffers outgrown but kept until the context is released: graphs
    // captured earlier still point at them (each replays alone on its
    // stream), so freeing one would leave a graph reading freed memory.
    std::vector<void*> retired;
  };
  std::map<void*, Scratch> scratch;
  // The route operation's own buffer per stream (its arrival counter and
  // temporaries: ops_route.cpp), apart from `scratch`, which the ops it
  // calls reuse.
  std::map<void*, Scratch> route;
  // MoE weight tables, keyed by the three host arrays; `host` is the copy
  // uploaded, compared on each use so changed arrays are re-uploaded.
  struct MoeTable {
    std::vector<seatrt::cuda::WeightRef> host;
    seatrt::cuda::WeightRef* device = nullptr;
    bool vec = false;
  };
  std::map<std::vector<const void*>, MoeTable> moe_tables;
  // Pinned host buffer for sampling; sample() holds sample_mutex for its
  // whole call, so concurrent samples on different streams do not share it.
  std::mutex sample_mutex;
  void* pinned = nullptr;
  size_t pinned_bytes = 0;
};

namespace seatrt::cuda {

// Throws sdk::Error for a CUDA error, naming `what`.
void check(cudaError_t err, const std::string& what);
inline void check(int err, const std::string& what) { check(static_cast<cudaError_t>(err), what); }

// Makes `ctx`'s device current on the calling thread.
void use_device(seatrt_kernel_context* ctx);

// Scratch memory of at least `bytes` for `stream`.  Growing synchronises the
// stream first; it is refused while the stream is being captured.
void* scratch(seatrt_kernel_context* ctx, seatrt_stream stream, size_t bytes);

// The route operation's buffer of at least `bytes` for `stream`, its first
// 256 bytes zero when (re)allocated (the fused kernel's arrival counter,
// which each launch leaves zero).  Growing synchronises and is refused while
// the stream is being captured, as scratch.
void* route_buffer(seatrt_kernel_context* ctx, seatrt_stream stream, size_t bytes);

// Pinned host memory of at least `bytes` (the caller holds it until its
// synchronous use ends; sample is synchronous).
void* pinned(seatrt_kernel_context* ctx, size_t bytes);

void release_context_memory(seatrt_kernel_context* ctx);

}  // namespace seatrt::cuda
