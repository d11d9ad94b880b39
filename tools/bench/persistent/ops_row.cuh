// The per-row instructions between the linears: embedding, the residual
// after attention (and the three normed inputs of the FFN side), and the
// layer's end (the FFN's three norms, layer_scalar, the next layer's input
// norm or the final norm).  One row per instruction, 256 threads x 11
// columns held in registers.
#pragma once
#include "instr.hpp"
#include "sync.cuh"

namespace pk {

constexpr int kPer = kH / 256;  // 11

__device__ __forceinline__ float inv_rms(const float (&v)[kPer], float* red) {
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < kPer; ++i) s += v[i] * v[i];
  return rsqrtf(block_sum(s, red) / kH + 1e-6f);
}
// Gains are read (read-only path) into registers before any store: through
// plain pointers a store may alias the next gain, and each load would then
// wait for the store before it (measured: 13-18 us per row op).
__device__ __forceinline__ void load_gain(const float* g, float (&o)[kPer]) {
#pragma unroll
  for (int i = 0; i < kPer; ++i) o[i] = __ldg(g + threadIdx.x + 256 * i);
}
__device__ __forceinline__ void store_normed(__nv_bfloat16* dst, const float (&v)[kPer], float rs, const float (&g)[kPer],
                                             float extra) {
#pragma unroll
  for (int i = 0; i < kPer; ++i) dst[threadIdx.x + 256 * i] = __float2bfloat16_rn(v[i] * rs * g[i] * extra);
}

__device__ void exec_embed(const Params& P, const Instr& in, float* red) {
  const int b = in.a0;
  float v[kPer], g[kPer];
  load_gain(P.layers[0].g_in, g);
  const __nv_bfloat16* e = P.embed + size_t(P.tokens[b]) * kH;
#pragma unroll
  for (int i = 0; i < kPer; ++i) v[i] = __bfloat162float(e[threadIdx.x + 256 * i]) * 53.06599664568640f;  // sqrt(H)
#pragma unroll
  for (int i = 0; i < kPer; ++i) P.h[size_t(b) * kH + threadIdx.x + 256 * i] = v[i];
  store_normed(P.xa + size_t(b) * kH, v, inv_rms(v, red), g, 1.f);
}

__device__ void exec_resid(const Params& P, const Instr& in, float* red) {
  const int b = in.a0;
  const LayerP& lp = P.layers[in.layer];
  float o[kPer], r[kPer], ga[kPer], g1[kPer], g2[kPer], g3[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    o[i] = __ldcg(P.o + size_t(b) * kH + threadIdx.x + 256 * i);
    r[i] = __ldcg(P.h + size_t(b) * kH + threadIdx.x + 256 * i);
  }
  load_gain(lp.g_postattn, ga);
  load_gain(lp.g_preffn, g1);
  load_gain(lp.g_preffn2, g2);
  load_gain(lp.router_scale, g3);
  const float rs = inv_rms(o, red);
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    r[i] += o[i] * rs * ga[i];
    P.r[size_t(b) * kH + threadIdx.x + 256 * i] = r[i];
  }
  const float rs2 = inv_rms(r, red);
  store_normed(P.xm + size_t(b) * kH, r, rs2, g1, 1.f);
  store_normed(P.xe + size_t(b) * kH, r, rs2, g2, 1.f);
  store_normed(P.xr + size_t(b) * kH, r, rs2, g3, 0.018844459036110603f);  // H^-1/2
}

__device__ void exec_final(const Params& P, const Instr& in, float* red) {
  const int b = in.a0, l = in.layer;
  const LayerP& lp = P.layers[l];
  float m[kPer], e[kPer], s[kPer], rr[kPer], g1[kPer], g2[kPer], gp[kPer], gn[kPer];
  load_gain(lp.g_post1, g1);
  load_gain(lp.g_post2, g2);
  load_gain(lp.g_post, gp);
  load_gain(l + 1 < kL ? P.layers[l + 1].g_in : P.final_norm, gn);
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = threadIdx.x + 256 * i;
    m[i] = __ldcg(P.m + size_t(b) * kH + c);
    rr[i] = __ldcg(P.r + size_t(b) * kH + c);
    float t = 0.f;
#pragma unroll
    for (int k = 0; k < kTopK; ++k) t += __ldcg(P.eo + (size_t(b) * kTopK + k) * kH + c);
    e[i] = t;
  }
  const float rm = inv_rms(m, red), re = inv_rms(e, red);
#pragma unroll
  for (int i = 0; i < kPer; ++i) s[i] = m[i] * rm * g1[i] + e[i] * re * g2[i];
  const float rsum = inv_rms(s, red);
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = threadIdx.x + 256 * i;
    s[i] = (rr[i] + s[i] * rsum * gp[i]) * lp.layer_scalar;
    P.h[size_t(b) * kH + c] = s[i];
  }
  store_normed(P.xa + size_t(b) * kH, s, inv_rms(s, red), gn, 1.f);
}

}  // namespace pk
