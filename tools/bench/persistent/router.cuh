// The router's last tile (ticket: the one that finishes last) turns the
// logits of all rows into the layer's MoE task queue: per row softmax over
// 128 experts, top-8, renormalised, times per_expert_scale; then one slot per
// distinct expert (slot order = expert order) holding its (row*8+k, weight)
// list.  Empty slots get expert -1 so their instructions are no-ops that
// still count.
#pragma once
#include "instr.hpp"
#include "sync.cuh"

namespace pk {

// Called by all threads after the tile wrote its logits; true: this block
// was last and built the queue (the caller signals "routed").
__device__ bool router_last_tile(const Params& P, int l, float* scratch, int* sh) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    sh[0] = atomicAdd(P.counters + ctr(l, T_ROUTER), 1u) == kE / kBf16Rows - 1;
  }
  __syncthreads();
  if (!sh[0]) return false;
  __threadfence();
  const int B = P.B, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  int* sel_e = sh + 8;                                     // [B*8]
  float* sel_w = reinterpret_cast<float*>(sh + 8 + 256);   // [B*8]
  int* slot_of = sh + 8 + 512;                             // [128]
  int* wtot = sh + 8 + 640;                                // [4]
  for (int b = warp; b < B; b += 8) {
    float v[4], p[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = __ldcg(P.rlog + b * kE + lane + 32 * i);
    float mx = warp_max(fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3])));
    float s = 0.f;
    for (int i = 0; i < 4; ++i) s += (p[i] = __expf(v[i] - mx));
    s = warp_sum(s);
    float tsum = 0.f, chosen_w = 0.f;
    int chosen_e = -1;
    for (int k = 0; k < kTopK; ++k) {
      float bv = -1.f;
      int bi = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (p[i] > bv) { bv = p[i]; bi = lane + 32 * i; }
      for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
        const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (ov > bv || (ov == bv && oi < bi)) { bv = ov; bi = oi; }
      }
      if (lane == k) { chosen_e = bi; chosen_w = bv / s; }
      tsum += bv / s;
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (bi == lane + 32 * i) p[i] = -2.f;
    }
    if (lane < kTopK) {
      sel_e[b * kTopK + lane] = chosen_e;
      sel_w[b * kTopK + lane] = chosen_w / tsum * P.layers[l].per_expert_scale[chosen_e];
      P.tok_exp[(l * kMaxB + b) * kTopK + lane] = chosen_e;
    }
  }
  __syncthreads();
  const int n = B * kTopK;
  int cnt = 0;
  if (threadIdx.x < kE) {
    for (int i = 0; i < n; ++i) cnt += sel_e[i] == int(threadIdx.x);
    const unsigned m = __ballot_sync(0xffffffffu, cnt > 0);
    if (lane == 0) wtot[warp] = __popc(m);
    slot_of[threadIdx.x] = __popc(m & ((1u << lane) - 1u));
  }
  __syncthreads();
  if (threadIdx.x < kE) {
    int base = 0;
    for (int w = 0; w < warp; ++w) base += wtot[w];
    const int slots = n < kE ? n : kE;
    const int qb = l * kE;
    if (cnt > 0) {
      const int s = base + slot_of[threadIdx.x];
      P.q_expert[qb + s] = threadIdx.x;
      P.q_cnt[qb + s] = cnt;
      int j = 0;
      for (int i = 0; i < n; ++i)
        if (sel_e[i] == int(threadIdx.x)) {
          P.q_tok[(qb + s) * kMaxB + j] = i;  // row * 8 + k
          P.q_w[(qb + s) * kMaxB + j] = sel_w[i];
          ++j;
        }
    }
    const int used = wtot[0] + wtot[1] + wtot[2] + wtot[3];
    if (int(threadIdx.x) >= used && int(threadIdx.x) < slots) P.q_expert[qb + threadIdx.x] = -1;
  }
  (void)scratch;
  return true;
}

}  // namespace pk
