// The route operation at decode sizes: a MoE layer's router
// input norm, router Linear and top-k, and its experts' input norm, in one
// launch instead of three (rms_norm_multi, the router's small-N Linear,
// router_topk).  Why: at decode each of those is a chain of a few
// microseconds on the experts' branch, the longer of a MoE layer's two
// branches (kernels/cuda/NOTES-decode.md, version 18).
//
// Block (n, y) -- one per expert and, with SEATRT_ROUTE=groups, one per
// group of up to 8 tokens -- reads the router's row n and its tokens' rows of
// x (from L2) in passes of up to kRows tokens, and sums w * (x * router_gain)
// and x * x in one sweep:
//   logit[t, n] = rsqrt(mean(x[t]^2) + eps) * sum_c w[n, c] x[t, c] g[c]
// which is rmsnorm(x) * g . w with the 1/rms taken out of the sum (the
// contract allows this order of rounding).  Every block thus knows its
// tokens' 1/rms and writes its slice of their expert_in = x * inv *
// expert_gain (the multiplications in rms_norm's order).  The last block to
// finish (an arrival counter, the grid-barrier fence pattern) reads the
// logits back from L2 and runs each row's softmax and top-k in a warp.
// Why token groups (opt-in until measured on a device): with one block per
// expert for all 32 tokens every block reads 360 KB of x, and the kernel
// took 42 us at 32 tokens against 12 at 1 (CUPTI timeline, 2026-12-05), on
// the critical path of every MoE layer; groups of 8 make 4x the blocks, each
// reading 90 KB.
#include <cstdlib>
#include <cstring>

#include "device_common.cuh"
#include "pdl.cuh"
#include "route.hpp"
#include "router_topk.cuh"

namespace seatrt::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ void f32x8(const float* p, float (&f)[8]) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
}

// This thread's 8 router weights at column c times the router gain.
__device__ __forceinline__ void weights8(const RouteProblem& a, const __nv_bfloat16* wr, int64_t c, float (&wg)[8]) {
  bf16x8_to_float(*reinterpret_cast<const uint4*>(wr + c), wg);
  if (a.router_gain) {
    float g[8];
    f32x8(a.router_gain + c, g);
#pragma unroll
    for (int j = 0; j < 8; ++j) wg[j] *= g[j];
  }
}

// Column chunks (8 columns each) per thread whose weights are loaded before
// the PDL wait: both of Gemma-4's (2,816 columns = 352 chunks over 256
// threads); wider rows load the rest after it.
constexpr int kEarlyChunks = 2;

template <int kRows>
__global__ void __launch_bounds__(kThreads) route_kernel(RouteProblem a) {
  const __nv_bfloat16* wr = a.w + int64_t(blockIdx.x) * a.w_row_elems;
  // The router's weights and gain are the model's, written at load, not by
  // the kernels before this one: their DRAM latency overlaps the previous
  // kernel's tail (as the decode GEMVs do).  Everything else waits.
  float early[kEarlyChunks][8];
#pragma unroll
  for (int q = 0; q < kEarlyChunks; ++q) {
    const int64_t c = (int64_t(threadIdx.x) + int64_t(q) * kThreads) * 8;
    if (c < a.h) weights8(a, wr, c, early[q]);
  }
  pdl_enter();  // before any other global access (pdl.cuh)
  __shared__ float part_dot[kWarps][kRows];
  __shared__ float part_ss[kWarps][kRows];
  __shared__ float inv_rms[kRouteMaxRows];
  __shared__ int is_last;
  const int n = static_cast<int>(blockIdx.x);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int T = static_cast<int>(a.x.rows);
  const float* xs = static_cast<const float*>(a.x.data);
  // This block's passes: tokens [m0, m0 + kRows) for m0 = y * kRows, then
  // every gridDim.y * kRows tokens on.
  const int first = static_cast<int>(blockIdx.y) * kRows, stride = static_cast<int>(gridDim.y) * kRows;

  for (int m0 = first; m0 < T; m0 += stride) {
    const int rows = T - m0 < kRows ? T - m0 : kRows;
    float dot[kRows] = {}, ss[kRows] = {};
    auto accumulate = [&](int64_t c, const float (&wg)[8]) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (r >= rows) break;
        float xf[8];
        f32x8(xs + (m0 + r) * a.x.row_stride + c, xf);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          dot[r] = fmaf(wg[j], xf[j], dot[r]);
          ss[r] = fmaf(xf[j], xf[j], ss[r]);
        }
      }
    };
#pragma unroll
    for (int q = 0; q < kEarlyChunks; ++q) {
      const int64_t c = (int64_t(threadIdx.x) + int64_t(q) * kThreads) * 8;
      if (c < a.h) accumulate(c, early[q]);
    }
    for (int64_t c = (int64_t(threadIdx.x) + int64_t(kEarlyChunks) * kThreads) * 8; c < a.h;
         c += int64_t(kThreads) * 8) {
      float wg[8];
      weights8(a, wr, c, wg);
      accumulate(c, wg);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const float d = warp_sum(dot[r]), q = warp_sum(ss[r]);
      if (lane == 0) part_dot[warp][r] = d, part_ss[warp][r] = q;
    }
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < rows) {
      const int r = static_cast<int>(threadIdx.x);
      float d = 0.0f, q = 0.0f;
#pragma unroll
      for (int w8 = 0; w8 < kWarps; ++w8) d += part_dot[w8][r], q += part_ss[w8][r];
      const float inv = rsqrtf(q / static_cast<float>(a.h) + a.eps);
      inv_rms[m0 + r] = inv;
      a.logits[int64_t(m0 + r) * a.logits_stride + n] = d * inv;
    }
    __syncthreads();
  }

  // This block's slice of expert_in: columns [c0, c1) of its tokens' rows.
  if (a.expert_in) {
    const int64_t per = (a.h + gridDim.x - 1) / gridDim.x;
    const int64_t c0 = int64_t(n) * per, c1 = c0 + per < a.h ? c0 + per : a.h;
    const int64_t width = c1 > c0 ? c1 - c0 : 0;
    for (int m0 = first; m0 < T; m0 += stride) {
      const int rows = T - m0 < kRows ? T - m0 : kRows;
      for (int64_t i = threadIdx.x; i < int64_t(rows) * width; i += kThreads) {
        const int r = m0 + static_cast<int>(i / width);
        const int64_t c = c0 + i % width;
        float v = xs[r * a.x.row_stride + c] * inv_rms[r];
        if (a.expert_gain) v *= a.expert_gain[c];
        a.expert_in[r * a.expert_in_stride + c] = v;
      }
    }
  }

  // The last block in: every logit is written (each block fenced its stores
  // before arriving); it routes every row, one warp per row.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(a.counter, 1) == static_cast<int>(gridDim.x * gridDim.y) - 1;
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  for (int r = warp; r < T; r += kWarps) {
    const float* row = a.logits + int64_t(r) * a.logits_stride;
    warp_topk_row([&](int e) { return __ldcg(row + e); }, static_cast<int>(a.e), a.top_k, a.renormalize,
                  a.per_expert_scale, a.scale_dtype, a.ids + int64_t(r) * a.top_k, a.weights + int64_t(r) * a.top_k);
  }
  if (threadIdx.x == 0) *a.counter = 0;  // for the next launch on this stream
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool route_fused_fits(const RouteProblem& p) {
  return p.w && p.x.data && p.logits && p.ids && p.weights && p.counter && p.x.dtype == SEATRT_DTYPE_F32 &&
         p.x.rows >= 1 && p.x.rows <= kRouteMaxRows && p.e >= 1 && p.e <= kWarpExperts && p.top_k >= 1 &&
         p.top_k <= kWarpTopK && p.top_k <= p.e && p.h >= 8 && p.h % 8 == 0 && aligned16(p.w) &&
         p.w_row_elems % 8 == 0 && aligned16(p.x.data) && p.x.row_stride % 4 == 0 &&
         (!p.router_gain || aligned16(p.router_gain));
}

namespace {

// SEATRT_ROUTE=groups (read at each launch; a switch until measured on a
// device): blocks per group of 8 tokens instead of one pass over all tokens.
bool route_token_groups() {
  const char* v = std::getenv("SEATRT_ROUTE");
  return v && std::strcmp(v, "groups") == 0;
}

}  // namespace

int launch_route_fused(Stream s, const RouteProblem& p) {
  const bool groups = route_token_groups() && p.x.rows > 8;
  const dim3 grid(static_cast<unsigned>(p.e), groups ? static_cast<unsigned>((p.x.rows + 7) / 8) : 1u);
  (void)launch_pdl(p.x.rows <= 8 || groups ? route_kernel<8> : route_kernel<32>, grid, kThreads, 0,
                   static_cast<cudaStream_t>(s), p);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace seatrt::cuda
