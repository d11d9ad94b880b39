// The prefetch_weights kernel (prefetch.hpp).  Why: at batch 1 a decode
// step is a chain of latency-bound kernels (CUPTI timeline, 2026-12-05:
// q/k/v's Linear adds 12 us for 11.5 MB, o_proj 7 us for 5.8 MB); asked of
// L2 while the previous layer's experts run, their first loads hit L2.
#include <algorithm>

#include "pdl.cuh"
#include "prefetch.hpp"

namespace seatrt::cuda {
namespace {

constexpr uintptr_t kPiece = 32 * 1024;
constexpr uintptr_t kChunk = 32 * kPiece;  // one block: a lane per piece

__global__ void prefetch_kernel(PrefetchRanges r) {
  const int i = static_cast<int>(blockIdx.y);
  if (i < r.count) {
    const uintptr_t b = (reinterpret_cast<uintptr_t>(r.begin[i]) + 15) & ~uintptr_t(15);
    const uintptr_t e = reinterpret_cast<uintptr_t>(r.end[i]) & ~uintptr_t(15);
    const uintptr_t p = b + uintptr_t(blockIdx.x) * kChunk + uintptr_t(threadIdx.x) * kPiece;
    if (p < e) {
      const uint32_t n = static_cast<uint32_t>(e - p < kPiece ? e - p : kPiece);
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(n) : "memory");
    }
  }
  // Keep the stream's chain: the next kernel may start now, and whoever
  // waits for this grid also waits for the one before it.
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

}  // namespace

int launch_prefetch(Stream s, const PrefetchRanges& r) {
  if (r.count <= 0) return 0;
  uintptr_t longest = 0;
  for (int i = 0; i < r.count; ++i)
    longest = std::max<uintptr_t>(longest, reinterpret_cast<uintptr_t>(r.end[i]) - reinterpret_cast<uintptr_t>(r.begin[i]));
  const auto chunks = static_cast<unsigned>((longest + kChunk - 1) / kChunk);
  if (chunks == 0) return 0;
  (void)launch_pdl(prefetch_kernel, dim3(chunks, static_cast<unsigned>(r.count)), dim3(32), 0,
                   static_cast<cudaStream_t>(s), r);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace seatrt::cuda
