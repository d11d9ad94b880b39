// The router's softmax and top-k for one row in one warp, shared by
// router_topk (k_router.cu) and the fused route operation (k_route.cu), so
// both choose experts by the same arithmetic.  Softmax in fp32 (max, exp,
// sum, divide), top-k rounds with ties to the lower id, the chosen total
// summed in round order, then renormalisation and the per-expert scale.
// The probabilities live in registers (expert lane + 32 i in p[i]) and no
// barrier is passed: the block kernel's ~30 barriers were its whole cost at
// decode (ncu, 2026-12-01: ~9 us for one row).
#pragma once

#include "device_common.cuh"

namespace seatrt::cuda {

constexpr int kWarpExperts = 256;  // experts per row one warp takes (8 per lane)
constexpr int kWarpTopK = 32;

// Warp-wide arg-max over (value, index) with ties to the lower index; every
// lane gets the result.
__device__ __forceinline__ void warp_argmax(float& v, int& idx) {
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, o);
    const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
    if (ov > v || (ov == v && oi < idx)) { v = ov; idx = oi; }
  }
}

// Called by all 32 lanes of a warp.  logit(e) reads the row's logit e (E <=
// kWarpExperts, top_k <= kWarpTopK); ids / weights: the row's k outputs.
template <class LogitOf>
__device__ __forceinline__ void warp_topk_row(LogitOf logit, int E, int32_t top_k, bool renormalize, const void* pes,
                                              int32_t pes_dtype, int32_t* ids, float* weights) {
  constexpr int kPer = kWarpExperts / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  float p[kPer], scale[kPer];
  float mx = -INFINITY;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int e = lane + 32 * i;
    p[i] = e < E ? logit(e) : -INFINITY;
    mx = fmaxf(mx, p[i]);
  }
  // The per-expert scales with the logits (a load of the chosen one after
  // the rounds would add a memory latency to the row's chain); lane j takes
  // its chosen expert's from the lane holding it.
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int e = lane + 32 * i;
    scale[i] = pes && e < E ? load_as_float(pes, pes_dtype, e) : 1.0f;
  }
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    if (lane + 32 * i < E) {
      p[i] = expf(p[i] - mx);
      sum += p[i];
    }
  }
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
#pragma unroll
  for (int i = 0; i < kPer; ++i)
    if (lane + 32 * i < E) p[i] /= sum;
  float total = 0.0f, mine = 0.0f;
  int mine_id = 0;
  for (int j = 0; j < top_k; ++j) {
    float v = -INFINITY;
    int idx = 0x7fffffff;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int e = lane + 32 * i;
      if (e < E && (p[i] > v || (p[i] == v && e < idx))) { v = p[i]; idx = e; }
    }
    warp_argmax(v, idx);
#pragma unroll
    for (int i = 0; i < kPer; ++i)
      if (lane + 32 * i == idx) p[i] = -INFINITY;  // excluded from the next rounds
    if (lane == j) { mine = v; mine_id = idx; }
    total += v;
  }
  float chosen_scale = 1.0f;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const float s = __shfl_sync(0xffffffffu, scale[i], mine_id & 31);
    if ((mine_id >> 5) == i) chosen_scale = s;
  }
  if (lane < top_k) {
    float w = mine;
    if (renormalize) w = total > 0.0f ? w / total : 0.0f;
    if (pes) w *= chosen_scale;
    ids[lane] = mine_id;
    weights[lane] = w;
  }
}

}  // namespace seatrt::cuda
