// Split-K decode attention for one (row, KV head, split of 64 cached
// positions) over the paged fp8 cache already copied into the slot (K at 0,
// V at 64*D).  The last split also takes the new position (ctx): it applies
// k_norm + RoPE to the fresh K (v_norm to V; on full layers V is the raw K
// projection, k_eq_v), rounds both to fp8 as the cache holds them and
// writes them there.  Each split leaves (max, sum, acc[D]) per query head;
// the split that finishes last (ticket) combines them.  Scale 1.0: the
// q/k norms carry the temperature.
#pragma once
#include "instr.hpp"
#include "sync.cuh"

namespace pk {

constexpr int kPartStride = 514;  // floats per (split, head) partial: m, l, acc[512]
constexpr int kMaxSplits = 8;     // ctx <= 512 (main checks)

__device__ __forceinline__ float rope_freq(bool full, int i) {
  if (full) return i < 64 ? powf(1.0e6f, -2.0f * i / 512.f) : 0.f;
  return powf(1.0e4f, -2.0f * i / 256.f);
}
// In-place RoPE (rotate-half pairs i, i + D/2) of `heads` rows of D floats.
__device__ void rope_rows(float* x, int heads, int D, bool full, int pos) {
  __syncthreads();
  for (int idx = threadIdx.x; idx < heads * D / 2; idx += blockDim.x) {
    const int h = idx / (D / 2), i = idx % (D / 2);
    float sn, cs;
    sincosf(pos * rope_freq(full, i), &sn, &cs);
    float* p = x + h * D;
    const float a = p[i], b = p[i + D / 2];
    p[i] = a * cs - b * sn;
    p[i + D / 2] = b * cs + a * sn;
  }
  __syncthreads();
}
// Warp-wide RMS norm of a D-float row from global (through L2) into smem:
// all D/32 loads of a lane issued at once (one L2 round trip, not D/32).
template <int D>
__device__ void warp_norm_row(const float* src, float* dst, const float* gain, bool to_fp8) {
  const int lane = threadIdx.x & 31;
  float v[D / 32];
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < D / 32; ++j) v[j] = __ldcg(src + lane + 32 * j);
#pragma unroll
  for (int j = 0; j < D / 32; ++j) s += v[j] * v[j];
  const float rs = rsqrtf(warp_sum(s) / D + 1e-6f);
  float gv[D / 32];  // gains into registers before the stores (aliasing)
#pragma unroll
  for (int j = 0; j < D / 32; ++j) gv[j] = gain ? __ldg(gain + lane + 32 * j) : 1.f;
#pragma unroll
  for (int j = 0; j < D / 32; ++j) {
    const float x = v[j] * rs * gv[j];
    dst[lane + 32 * j] = to_fp8 ? e4m3f(f2e4m3(x)) : x;
  }
}

template <int D, int G>
__device__ bool exec_attn_t(const Params& P, const Instr& in, const uint8_t* slot, float* sm, int* sh) {
  const int l = in.layer, b = in.a0, kh = in.a1, s = in.a2;
  const bool full = D == 512;
  const int hkv = kHq / G, ns = n_splits(P.ctx);
  const bool last = s == ns - 1;
  const int ntok = kSplitTok + (last ? 1 : 0);
  const LayerP& lp = P.layers[l];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float* qs = sm;               // [G][D]
  float* kn = qs + G * D;       // [D]
  float* vn = kn + D;           // [D]
  float* sc = vn + D;           // [G][65]
  float* ml = sc + G * 65;      // [G][2]
  const float* q = P.qkv + size_t(b) * layer_nqkv(l);
  if (warp < G) warp_norm_row<D>(q + (kh * G + warp) * D, qs + warp * D, lp.q_norm, false);
  if (last && warp == G % 8) warp_norm_row<D>(q + kHq * D + kh * D, kn, lp.k_norm, false);
  if (last && warp == (G + 1) % 8)
    warp_norm_row<D>(q + kHq * D + (full ? 0 : hkv * D) + kh * D, vn, nullptr, true);
  rope_rows(qs, G, D, full, P.ctx);
  if (last) {
    rope_rows(kn, 1, D, full, P.ctx);
    const int page = P.block_table[b * P.pages_per_seq + P.ctx / kPageTok];
    const size_t off = ((size_t(page) * hkv + kh) * kPageTok + P.ctx % kPageTok) * D;
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
      kn[d] = e4m3f(f2e4m3(kn[d]));
      lp.kc[off + d] = f2e4m3(kn[d]);
      lp.vc[off + d] = f2e4m3(vn[d]);
    }
    __syncthreads();
  }
  // scores: a warp per position, lanes over D
  const uint8_t* Ks = slot;
  const uint8_t* Vs = slot + kSplitTok * D;
  for (int i = warp; i < ntok; i += 8) {
    constexpr int per = D / 32;
    float kv[per];
#pragma unroll
    for (int j = 0; j < per; ++j) kv[j] = i < kSplitTok ? e4m3f(Ks[i * D + lane * per + j]) : kn[lane * per + j];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float dot = 0.f;
#pragma unroll
      for (int j = 0; j < per; ++j) dot += kv[j] * qs[g * D + lane * per + j];
      dot = warp_sum(dot);
      if (lane == 0) sc[g * 65 + i] = dot;
    }
  }
  __syncthreads();
  if (warp < G) {
    float mx = -INFINITY;
    for (int i = lane; i < ntok; i += 32) mx = fmaxf(mx, sc[warp * 65 + i]);
    mx = warp_max(mx);
    float sum = 0.f;
    for (int i = lane; i < ntok; i += 32) {
      const float p = __expf(sc[warp * 65 + i] - mx);
      sc[warp * 65 + i] = p;
      sum += p;
    }
    sum = warp_sum(sum);
    if (lane == 0) { ml[2 * warp] = mx; ml[2 * warp + 1] = sum; }
  }
  __syncthreads();
  float* part = P.attn_part + (size_t(b * 8 + kh) * ns + s) * 8 * kPartStride;
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float acc[G];
#pragma unroll
    for (int g = 0; g < G; ++g) acc[g] = 0.f;
    for (int i = 0; i < ntok; ++i) {
      const float v = i < kSplitTok ? e4m3f(Vs[i * D + d]) : vn[d];
#pragma unroll
      for (int g = 0; g < G; ++g) acc[g] += sc[g * 65 + i] * v;
    }
#pragma unroll
    for (int g = 0; g < G; ++g) part[g * kPartStride + 2 + d] = acc[g];
  }
  if (threadIdx.x < G) {
    part[threadIdx.x * kPartStride] = ml[2 * threadIdx.x];
    part[threadIdx.x * kPartStride + 1] = ml[2 * threadIdx.x + 1];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    sh[0] = atomicAdd(P.counters + ctr(l, T_ATT + b * 8 + kh), 1u) == unsigned(ns - 1);
  }
  __syncthreads();
  if (!sh[0]) return false;
  __threadfence();
  // combine: every split's (m, l) and acc loaded at once (unrolled up to
  // kMaxSplits), one L2 round trip instead of one per split
  const float* p0 = P.attn_part + size_t(b * 8 + kh) * ns * 8 * kPartStride;
  for (int idx = threadIdx.x; idx < G * D; idx += blockDim.x) {
    const int g = idx / D, d = idx % D;
    float m[kMaxSplits], lsum[kMaxSplits], a[kMaxSplits];
#pragma unroll
    for (int j = 0; j < kMaxSplits; ++j) {
      const float* pj = p0 + (j * 8 + g) * kPartStride;
      m[j] = j < ns ? __ldcg(pj) : -INFINITY;
      lsum[j] = j < ns ? __ldcg(pj + 1) : 0.f;
      a[j] = j < ns ? __ldcg(pj + 2 + d) : 0.f;
    }
    float M = -INFINITY;
#pragma unroll
    for (int j = 0; j < kMaxSplits; ++j) M = fmaxf(M, m[j]);
    float num = 0.f, den = 0.f;
#pragma unroll
    for (int j = 0; j < kMaxSplits; ++j) {
      const float w = j < ns ? __expf(m[j] - M) : 0.f;
      num += w * a[j];
      den += w * lsum[j];
    }
    P.attn[size_t(b) * kHq * D + (kh * G + g) * D + d] = __float2bfloat16_rn(num / den);
  }
  return true;
}

__device__ bool exec_attn(const Params& P, const Instr& in, const uint8_t* slot, float* sm, int* sh) {
  return layer_full(in.layer) ? exec_attn_t<512, 8>(P, in, slot, sm, sh) : exec_attn_t<256, 2>(P, in, slot, sm, sh);
}

}  // namespace pk
