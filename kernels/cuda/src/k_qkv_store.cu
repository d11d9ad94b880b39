// qkv_norm_rope_store: everything between a layer's q/k/v
// projections and its attention in one launch -- q's per-head norm and
// RoPE (in place), k's norm and RoPE, v's norm (or the raw k's), and the
// store of k' and v' into the paged cache.  The unfused sequence is four
// launches (rms_norm_rope q, rms_norm v, rms_norm_rope k, kv_store), three
// of them one after the other on the critical path of a decode step, each
// costing a few microseconds of launch and memory latency for a few KB.
//
// The arithmetic per element is that of k_fused_norm.cu's rms_norm_rope
// kernels and k_attention.cu's kv_store (fp32 sum of squares, x * inv *
// gain, sincosf of the fp32 angle, value / scale stored to the cache
// dtype), so for F32 activations the result equals the unfused sequence.
#include "device_common.cuh"
#include "fused_norm.hpp"
#include "pdl.cuh"

namespace seatrt::cuda {
namespace {

// Decode shapes: one 128-thread block per (token, head) row, blocks
// [0, q_heads) of a token are q rows, the rest its kv heads (k with its v).
// The rows, their gains and the frequencies are staged in shared memory
// (kStage arrays of D floats), all loaded before the first reduction so the
// row costs one memory latency; the block_sum barriers publish them and
// order every read of q before its in-place write.  kF32: every tensor F32,
// plain loads (device_common.cuh: load_elem).  A block per row spreads a
// row's sincosf over 128 threads and the rows over as many SMs
// (rms_norm_rope measured 6.5 against 10.5 us with a warp per row at
// decode).
constexpr int kStage = 5;  // row, v row, row gain, v gain, frequencies (D/2 used)

template <bool kF32>
__global__ void __launch_bounds__(128) qkv_store_block_kernel(QkvStoreProblem p) {
  pdl_enter();  // before any global access (pdl.cuh)
  extern __shared__ float stage[];
  __shared__ float scratch[32];
  const int64_t hq = p.q.d1, hkv = p.k.d1, dim = p.q.d2, half = dim / 2;
  float* row = stage;
  float* vrow = stage + dim;
  float* gain = stage + 2 * dim;
  float* vgain = stage + 3 * dim;
  float* freq = stage + 4 * dim;
  const int64_t t = blockIdx.x / (hq + hkv), h = blockIdx.x % (hq + hkv);
  const float pos = static_cast<float>(p.positions[t]);
  const float fdim = static_cast<float>(dim);
  const bool is_q = h < hq;  // uniform over the block
  const int64_t kh = h - hq;
  const bool want_v = !is_q && p.v_cache != nullptr, own_v = p.v.data != nullptr;
  const View3& x = is_q ? p.q : p.k;
  const int64_t xi = is_q ? t * p.q.s0 + h * p.q.s1 : t * p.k.s0 + kh * p.k.s1;
  const int64_t vi = own_v ? t * p.v.s0 + kh * p.v.s1 : 0;
  const Gain& g = is_q ? p.q_gain : p.k_gain;
  float ss = 0.0f, ssv = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
    const float v = load_elem<kF32>(x.data, x.dtype, xi + c);
    row[c] = v;
    ss += v * v;
    gain[c] = g.data ? load_elem<kF32>(g.data, g.dtype, c) : 1.0f;
    if (c < half) freq[c] = p.inv_freq[c];
    if (want_v) {
      const float vv = own_v ? load_elem<kF32>(p.v.data, p.v.dtype, vi + c) : v;  // v, or the raw k
      vrow[c] = vv;
      ssv += vv * vv;
      vgain[c] = p.v_gain.data ? load_elem<kF32>(p.v_gain.data, p.v_gain.dtype, c) : 1.0f;
    }
  }
  const float inv = rsqrtf(block_sum(ss, scratch) / fdim + p.eps);
  const float inv_v = want_v ? rsqrtf(block_sum(ssv, scratch) / fdim + p.eps) : 0.0f;  // want_v is uniform
  // Where the rotated pairs go: q in place, k' to the cache (-1 or out of
  // range skips the store, as kv_store).
  const int64_t slot = is_q ? 0 : p.slots[t];
  if (!is_q && (slot < 0 || slot >= p.num_slots)) return;
  const int64_t dst = slot * hkv * dim + kh * dim;
  for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
    // The gain multiplies only when present (x * 1 is x either way).
    float a = row[i] * inv * gain[i], b = row[i + half] * inv * gain[i + half];
    const float f = freq[i];
    float sn = 0.0f, cs = 1.0f;
    if (f != 0.0f) sincosf(pos * f, &sn, &cs);
    const float ra = a * cs - b * sn, rb = b * cs + a * sn;
    if (is_q) {
      store_from_float(p.q.data, p.q.dtype, xi + i, ra);
      store_from_float(p.q.data, p.q.dtype, xi + i + half, rb);
    } else {
      store_from_float(p.k_cache, p.cache_dtype, dst + i, ra / p.k_scale);
      store_from_float(p.k_cache, p.cache_dtype, dst + i + half, rb / p.k_scale);
    }
  }
  if (!want_v) return;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
    store_from_float(p.v_cache, p.cache_dtype, dst + c, vrow[c] * inv_v * vgain[c] / p.v_scale);
}

// Prompt shapes (many rows): one warp per row, 8 rows per block, rows in
// registers and shuffle sums (rms_norm_rope's warp kernel: 78 against 150 us
// per call at 8k tokens).  Lane l holds elements l + 32 j, so the rotated
// pairs (i, i + D/2) sit in the same lane (j and j + kPer/2).  Every load of
// a row -- its elements, gains and frequencies -- is issued before the first
// shuffle sum, so a row costs one memory latency (kF32: plain F32 loads;
// through load_as_float's runtime switch each array cost one, as in the
// register-row kernels of device_common.cuh).
constexpr int kRowsPerBlock = 8;
constexpr int64_t kWarpRowsMin = 4096;

template <int kPer, bool kF32>
__device__ __forceinline__ void load_gains(const Gain& g, int lane, float (&out)[kPer]) {
#pragma unroll
  for (int j = 0; j < kPer; ++j) out[j] = g.data ? load_elem<kF32>(g.data, g.dtype, lane + 32 * j) : 1.0f;
}

// Rotates each pair (v[j], v[j + kPer/2]) of a lane by pos * freq[j].
template <int kPer>
__device__ __forceinline__ void rotate_regs(float pos, const float (&freq)[kPer / 2], float (&v)[kPer]) {
#pragma unroll
  for (int j = 0; j < kPer / 2; ++j) {
    float sn = 0.0f, cs = 1.0f;
    if (freq[j] != 0.0f) sincosf(pos * freq[j], &sn, &cs);
    const float a = v[j], b = v[j + kPer / 2];
    v[j] = a * cs - b * sn;
    v[j + kPer / 2] = b * cs + a * sn;
  }
}

template <int kPer, bool kF32>
__global__ void __launch_bounds__(kRowsPerBlock * 32) qkv_store_warp_kernel(QkvStoreProblem p) {
  pdl_enter();  // before any global access (pdl.cuh)
  constexpr int kHalf = kPer / 2;
  constexpr float kDim = 32.0f * kPer;
  const int lane = threadIdx.x & 31;
  const int64_t hq = p.q.d1, hkv = p.k.d1;
  const int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (r >= p.q.d0 * (hq + hkv)) return;  // whole warps: the shuffles below see full warps
  const int64_t t = r / (hq + hkv), h = r % (hq + hkv);
  const float pos = static_cast<float>(p.positions[t]);
  float freq[kHalf];
#pragma unroll
  for (int j = 0; j < kHalf; ++j) freq[j] = p.inv_freq[lane + 32 * j];
  if (h < hq) {
    const int64_t qi = t * p.q.s0 + h * p.q.s1;
    float v[kPer], g[kPer];
#pragma unroll
    for (int j = 0; j < kPer; ++j) v[j] = load_elem<kF32>(p.q.data, p.q.dtype, qi + lane + 32 * j);
    load_gains<kPer, kF32>(p.q_gain, lane, g);
    float ss = 0.0f;
#pragma unroll
    for (int j = 0; j < kPer; ++j) ss += v[j] * v[j];
    const float inv = rsqrtf(warp_sum(ss) / kDim + p.eps);
#pragma unroll
    for (int j = 0; j < kPer; ++j) v[j] = v[j] * inv * g[j];
    rotate_regs<kPer>(pos, freq, v);
#pragma unroll
    for (int j = 0; j < kPer; ++j) store_from_float(p.q.data, p.q.dtype, qi + lane + 32 * j, v[j]);
    return;
  }
  const int64_t kh = h - hq;
  const int64_t ki = t * p.k.s0 + kh * p.k.s1;
  const bool want_v = p.v_cache != nullptr, own_v = p.v.data != nullptr;
  const int64_t vi = own_v ? t * p.v.s0 + kh * p.v.s1 : 0;
  const int64_t slot = p.slots[t];
  float kv[kPer], vv[kPer], kg[kPer], vg[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    kv[j] = load_elem<kF32>(p.k.data, p.k.dtype, ki + lane + 32 * j);
    vv[j] = !want_v ? 0.0f : own_v ? load_elem<kF32>(p.v.data, p.v.dtype, vi + lane + 32 * j) : kv[j];
  }
  load_gains<kPer, kF32>(p.k_gain, lane, kg);
  load_gains<kPer, kF32>(p.v_gain, lane, vg);
  float ssk = 0.0f, ssv = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    ssk += kv[j] * kv[j];
    ssv += vv[j] * vv[j];
  }
  const float inv_k = rsqrtf(warp_sum(ssk) / kDim + p.eps);
  const float inv_v = rsqrtf(warp_sum(ssv) / kDim + p.eps);
  if (slot < 0 || slot >= p.num_slots) return;  // -1 skips; out of range is ignored (as kv_store)
  const int64_t dst = slot * hkv * (32 * kPer) + kh * (32 * kPer);
#pragma unroll
  for (int j = 0; j < kPer; ++j) kv[j] = kv[j] * inv_k * kg[j];
  rotate_regs<kPer>(pos, freq, kv);
#pragma unroll
  for (int j = 0; j < kPer; ++j) store_from_float(p.k_cache, p.cache_dtype, dst + lane + 32 * j, kv[j] / p.k_scale);
  if (!want_v) return;
#pragma unroll
  for (int j = 0; j < kPer; ++j)
    store_from_float(p.v_cache, p.cache_dtype, dst + lane + 32 * j, vv[j] * inv_v * vg[j] / p.v_scale);
}

template <int kPer>
int launch_warp(cudaStream_t st, const QkvStoreProblem& p, int64_t rows, bool all_f32) {
  const auto blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  (void)launch_pdl(all_f32 ? qkv_store_warp_kernel<kPer, true> : qkv_store_warp_kernel<kPer, false>, blocks,
                   kRowsPerBlock * 32, 0, st, p);
  return last_error();
}

}  // namespace

int launch_qkv_norm_rope_store(Stream s, const QkvStoreProblem& p) {
  const int64_t rows = p.q.d0 * (p.q.d1 + p.k.d1);
  if (rows == 0 || p.q.d2 == 0) return 0;
  const cudaStream_t st = cudaStream_t(s);
  const auto f32 = [](const Gain& g) { return !g.data || g.dtype == SEATRT_DTYPE_F32; };
  const bool all_f32 = p.q.dtype == SEATRT_DTYPE_F32 && p.k.dtype == SEATRT_DTYPE_F32 &&
                       (!p.v.data || p.v.dtype == SEATRT_DTYPE_F32) && f32(p.q_gain) && f32(p.k_gain) && f32(p.v_gain);
  if (rows >= kWarpRowsMin && rows / kRowsPerBlock < (1u << 31)) {
    switch (p.q.d2) {
      case 64: return launch_warp<2>(st, p, rows, all_f32);
      case 128: return launch_warp<4>(st, p, rows, all_f32);
      case 256: return launch_warp<8>(st, p, rows, all_f32);
      case 512: return launch_warp<16>(st, p, rows, all_f32);
      default: break;
    }
  }
  const size_t shared = kStage * static_cast<size_t>(p.q.d2) * sizeof(float);
  (void)launch_pdl(all_f32 ? qkv_store_block_kernel<true> : qkv_store_block_kernel<false>, static_cast<unsigned>(rows),
                   128, shared, st, p);
  return last_error();
}

}  // namespace seatrt::cuda
