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
__device__ __forceinline__ void store_normed(__nv_bfloat16* dst, const float (&v)[kPer], float rs, const float* g,
                                             float extra) {
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = threadIdx.x + 256 * i;
    dst[c] = __float2bfloat16_rn(v[i] * rs * g[c] * extra);
  }
}

__device__ void exec_embed(const Params& P, const Instr& in, float* red) {
  const int b = in.a0;
  float v[kPer];
  const __nv_bfloat16* e = P.embed + size_t(P.tokens[b]) * kH;
#pragma unroll
  for (int i = 0; i < kPer; ++i) v[i] = __bfloat162float(e[threadIdx.x + 256 * i]) * 53.06599664568640f;  // sqrt(H)
#pragma unroll
  for (int i = 0; i < kPer; ++i) P.h[size_t(b) * kH + threadIdx.x + 256 * i] = v[i];
  store_normed(P.xa + size_t(b) * kH, v, inv_rms(v, red), P.layers[0].g_in, 1.f);
}

__device__ void exec_resid(const Params& P, const Instr& in, float* red) {
  const int b = in.a0;
  const LayerP& lp = P.layers[in.layer];
  float o[kPer], r[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) o[i] = __ldcg(P.o + size_t(b) * kH + threadIdx.x + 256 * i);
  const float rs = inv_rms(o, red);
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = threadIdx.x + 256 * i;
    r[i] = __ldcg(P.h + size_t(b) * kH + c) + o[i] * rs * lp.g_postattn[c];
    P.r[size_t(b) * kH + c] = r[i];
  }
  const float rs2 = inv_rms(r, red);
  store_normed(P.xm + size_t(b) * kH, r, rs2, lp.g_preffn, 1.f);
  store_normed(P.xe + size_t(b) * kH, r, rs2, lp.g_preffn2, 1.f);
  store_normed(P.xr + size_t(b) * kH, r, rs2, lp.router_scale, 0.018844459036110603f);  // H^-1/2
}

__device__ void exec_final(const Params& P, const Instr& in, float* red) {
  const int b = in.a0, l = in.layer;
  const LayerP& lp = P.layers[l];
  float m[kPer], e[kPer], s[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = threadIdx.x + 256 * i;
    m[i] = __ldcg(P.m + size_t(b) * kH + c);
    float t = 0.f;
#pragma unroll
    for (int k = 0; k < kTopK; ++k) t += __ldcg(P.eo + (size_t(b) * kTopK + k) * kH + c);
    e[i] = t;
  }
  const float rm = inv_rms(m, red), re = inv_rms(e, red);
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = threadIdx.x + 256 * i;
    s[i] = m[i] * rm * lp.g_post1[c] + e[i] * re * lp.g_post2[c];
  }
  const float rsum = inv_rms(s, red);
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int c = threadIdx.x + 256 * i;
    s[i] = (__ldcg(P.r + size_t(b) * kH + c) + s[i] * rsum * lp.g_post[c]) * lp.layer_scalar;
    P.h[size_t(b) * kH + c] = s[i];
  }
  const float* g = l + 1 < kL ? P.layers[l + 1].g_in : P.final_norm;
  store_normed(P.xa + size_t(b) * kH, s, inv_rms(s, red), g, 1.f);
}

}  // namespace pk
