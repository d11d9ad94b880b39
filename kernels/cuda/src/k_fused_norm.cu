// The fused norms: the norm/add/scale chains between a transformer's
// sublayers and the per-head q/k norm with its rotary embedding, one row
// normed with several gains and a MoE layer's two normed branches summed
// into the residual, each in one launch (one block
// per row) instead of two to four.  At batch 1 every
// launch costs about as much as its memory traffic, so the count is what
// matters.  The arithmetic per element follows k_basic.cu's rms_norm and
// rope kernels (fp32 sum of squares reduced by block_sum, x * inv * w,
// sincosf of the fp32 angle).
#include <initializer_list>

#include "device_common.cuh"
#include "pdl.cuh"
#include "fused_norm.hpp"

namespace seatrt::cuda {
namespace {

__device__ __forceinline__ float gain_at(const Gain& g, int64_t c) {
  return g.data ? load_as_float(g.data, g.dtype, c) : 1.0f;
}

// Pass 1 reads x; pass 2 updates the residual and sums the squares of the
// stored values (each thread re-reads only what it wrote); pass 3 writes
// out.  The block_sum between passes is a barrier: every read of x is done
// before out (which may alias x) is written.
__global__ void add_rms_norm_kernel(Mat x, Gain x_gain, Mat residual, float eps, float scale, Gain out_gain,
                                    Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const float cols = static_cast<float>(x.cols);
  float ss = 0.0f;
  for (int64_t c = threadIdx.x; c < x.cols; c += blockDim.x) {
    const float v = mat_load(x, r, c);
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss, scratch) / cols + eps);
  float ss_res = 0.0f;
  for (int64_t c = threadIdx.x; c < x.cols; c += blockDim.x) {
    float branch = mat_load(x, r, c) * inv;
    if (x_gain.data) branch *= gain_at(x_gain, c);
    mat_store(residual, r, c, (mat_load(residual, r, c) + branch) * scale);
    const float stored = mat_load(residual, r, c);
    ss_res += stored * stored;
  }
  if (!out.data) return;  // uniform over the block: no thread waits at a barrier alone
  const float inv_res = rsqrtf(block_sum(ss_res, scratch) / cols + eps);
  for (int64_t c = threadIdx.x; c < x.cols; c += blockDim.x) {
    float v = mat_load(residual, r, c) * inv_res;
    if (out_gain.data) v *= gain_at(out_gain, c);
    mat_store(out, r, c, v);
  }
}

// The same with the row, the residual and both gains in registers (rows of
// at most kRowRegs x blockDim.x columns): every load issued at once, so the
// row costs one memory latency, not one per element per pass.  Each thread
// reads and writes only its own columns, so out may alias x.
template <bool kF32>
__global__ void add_rms_norm_regs_kernel(Mat x, Gain x_gain, Mat residual, float eps, float scale, Gain out_gain,
                                         Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const float cols = static_cast<float>(x.cols);
  float xv[kRowRegs], res[kRowRegs], g1[kRowRegs], g2[kRowRegs];
  load_row_regs<kF32>(x, r, xv);
  load_row_regs<kF32>(residual, r, res);
  load_gain_regs<kF32>(x_gain.data, x_gain.dtype, x.cols, g1);
  load_gain_regs<kF32>(out_gain.data, out_gain.dtype, x.cols, g2);
  float ss = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) ss += xv[i] * xv[i];
  const float inv = rsqrtf(block_sum(ss, scratch) / cols + eps);
  float ss_res = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    const int64_t c = threadIdx.x + int64_t(i) * blockDim.x;
    if (c >= x.cols) continue;
    const float branch = xv[i] * inv * g1[i];
    const float updated = (res[i] + branch) * scale;
    mat_store(residual, r, c, updated);
    res[i] = stored_value(residual.dtype, updated);  // what pass 2 of the loop kernel re-reads
    ss_res += res[i] * res[i];
  }
  if (!out.data) return;  // uniform over the block: no thread waits at a barrier alone
  const float inv_res = rsqrtf(block_sum(ss_res, scratch) / cols + eps);
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    const int64_t c = threadIdx.x + int64_t(i) * blockDim.x;
    if (c < x.cols) mat_store(out, r, c, res[i] * inv_res * g2[i]);
  }
}

// Block b is row (t, h) = (b / d1, b % d1).  The row goes to shared memory
// (D floats), its norm is taken, then each thread rotates pairs (i, i + D/2).
__global__ void rms_norm_rope_kernel(View3 x, Gain gain, float eps, const int32_t* positions,
                                     const float* inv_freq, View3 out) {
  pdl_enter();  // before any global access (pdl.cuh)
  extern __shared__ float row[];
  __shared__ float scratch[32];
  const int64_t t = blockIdx.x / x.d1, h = blockIdx.x % x.d1;
  const int64_t dim = x.d2, half = dim / 2;
  const int64_t xi = t * x.s0 + h * x.s1, oi = t * out.s0 + h * out.s1;
  float ss = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
    const float v = load_as_float(x.data, x.dtype, xi + c);
    row[c] = v;
    ss += v * v;
  }
  // block_sum's barriers also publish row[] to every thread.
  const float inv = rsqrtf(block_sum(ss, scratch) / static_cast<float>(dim) + eps);
  const float p = static_cast<float>(positions[t]);
  for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
    float a = row[i] * inv, b = row[i + half] * inv;
    if (gain.data) {
      a *= gain_at(gain, i);
      b *= gain_at(gain, i + half);
    }
    const float f = inv_freq[i];
    float sn = 0.0f, cs = 1.0f;
    if (f != 0.0f) sincosf(p * f, &sn, &cs);
    store_from_float(out.data, out.dtype, oi + i, a * cs - b * sn);
    store_from_float(out.data, out.dtype, oi + i + half, b * cs + a * sn);
  }
}

// Head-sized rows (D = 32 * kPer, kPer even): one warp per row, 8 rows per
// block, the row in registers and a shuffle sum, no block barrier.  Lane l
// holds elements l + 32 j, so the rotated pairs (i, i + D/2) sit in the same
// lane (j and j + kPer/2).  At prompt length the block-per-row kernel above
// ran one 128-thread block per (token, head): ~150 us per call at 8k tokens,
// 2.4x its bytes (78 us with this kernel, H200).
constexpr int kRowsPerBlock = 8;
constexpr int64_t kWarpRowsMin = 4096;

template <int kPer>
__global__ void __launch_bounds__(kRowsPerBlock * 32)
    rms_norm_rope_warp_kernel(View3 x, Gain gain, float eps, const int32_t* positions, const float* inv_freq,
                              View3 out) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int lane = threadIdx.x & 31;
  const int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (r >= x.d0 * x.d1) return;  // whole warps: the shuffles below see full warps
  const int64_t t = r / x.d1, h = r % x.d1;
  const int64_t xi = t * x.s0 + h * x.s1, oi = t * out.s0 + h * out.s1;
  float v[kPer];
  float ss = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    v[j] = load_as_float(x.data, x.dtype, xi + lane + 32 * j);
    ss += v[j] * v[j];
  }
  const float inv = rsqrtf(warp_sum(ss) / static_cast<float>(32 * kPer) + eps);
  const float p = static_cast<float>(positions[t]);
  constexpr int kHalf = kPer / 2;
#pragma unroll
  for (int j = 0; j < kHalf; ++j) {
    const int64_t i = lane + 32 * j;
    float a = v[j] * inv, b = v[j + kHalf] * inv;
    if (gain.data) {
      a *= gain_at(gain, i);
      b *= gain_at(gain, i + 32 * kHalf);
    }
    const float f = inv_freq[i];
    float sn = 0.0f, cs = 1.0f;
    if (f != 0.0f) sincosf(p * f, &sn, &cs);
    store_from_float(out.data, out.dtype, oi + i, a * cs - b * sn);
    store_from_float(out.data, out.dtype, oi + i + 32 * kHalf, b * cs + a * sn);
  }
}

template <int kPer>
int launch_rms_norm_rope_warp(cudaStream_t st, const View3& x, Gain gain, float eps, const int32_t* positions,
                              const float* inv_freq, const View3& out) {
  const int64_t rows = x.d0 * x.d1;
  const auto blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  (void)launch_pdl(rms_norm_rope_warp_kernel<kPer>, blocks, kRowsPerBlock * 32, 0, st, x, gain, eps, positions,
                   inv_freq, out);
  return last_error();
}

// rms_norm_multi: rms_norm_regs_kernel (k_basic.cu) with one sum and up to
// kNormMultiMax gained outputs.  Every gain is loaded before the block's
// reduction, so the outputs cost no memory latency of their own.
template <bool kF32>
__global__ void rms_norm_multi_regs_kernel(Mat x, float eps, NormOuts o) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  float v[kRowRegs], g[kNormMultiMax][kRowRegs];
  load_row_regs<kF32>(x, r, v);
#pragma unroll
  for (int j = 0; j < kNormMultiMax; ++j)
    if (j < o.count) load_gain_regs<kF32>(o.gain[j].data, o.gain[j].dtype, x.cols, g[j]);
  float ss = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) ss += v[i] * v[i];
  const float inv = rsqrtf(block_sum(ss, scratch) / static_cast<float>(x.cols) + eps);
#pragma unroll
  for (int j = 0; j < kNormMultiMax; ++j) {
    if (j >= o.count) break;
#pragma unroll
    for (int i = 0; i < kRowRegs; ++i) {
      const int64_t c = threadIdx.x + int64_t(i) * blockDim.x;
      if (c < x.cols) mat_store(o.out[j], r, c, v[i] * inv * g[j][i]);
    }
  }
}

// The same with each pass over global memory (prompt-sized batches, see
// kRegsMaxRows): each thread reads a column once and writes every output
// from that value, so an output may alias x.
__global__ void rms_norm_multi_kernel(Mat x, float eps, NormOuts o) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const float inv = row_inv_rms(x, r, eps, scratch);
  for (int64_t c = threadIdx.x; c < x.cols; c += blockDim.x) {
    const float v = mat_load(x, r, c);
    for (int j = 0; j < o.count && j < kNormMultiMax; ++j) mat_store(o.out[j], r, c, v * inv * gain_at(o.gain[j], c));
  }
}

// add_rms_norm_pair: a MoE layer's feed-forward end, whose
// unfused sequence is rms_norm(a) into s, add_rms_norm(b into s),
// add_rms_norm(s into the residual, the next norm): three launches, the
// last two one after the other where the experts' branch joins.  The
// arithmetic follows those kernels: s = a * inv_a * a_gain, s = (s + b *
// inv_b * b_gain) * 1, then add_rms_norm_regs_kernel's on s.  Everything in
// registers (rows of at most kRowRegs x blockDim.x columns), so out may
// alias a or b (each thread reads its own columns before writing them).
template <bool kF32>
__global__ void add_rms_norm_pair_regs_kernel(Mat a, Gain a_gain, Mat b, Gain b_gain, Gain s_gain, Mat residual,
                                              float eps, float scale, Gain out_gain, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const float cols = static_cast<float>(a.cols);
  float av[kRowRegs], bv[kRowRegs], res[kRowRegs], ga[kRowRegs], gb[kRowRegs], gs[kRowRegs], go[kRowRegs];
  load_row_regs<kF32>(a, r, av);
  load_row_regs<kF32>(b, r, bv);
  load_row_regs<kF32>(residual, r, res);
  // Every gain before the first reduction: a load after it would add a
  // memory latency per gain to the row's chain.
  load_gain_regs<kF32>(a_gain.data, a_gain.dtype, a.cols, ga);
  load_gain_regs<kF32>(b_gain.data, b_gain.dtype, a.cols, gb);
  load_gain_regs<kF32>(s_gain.data, s_gain.dtype, a.cols, gs);
  load_gain_regs<kF32>(out_gain.data, out_gain.dtype, a.cols, go);
  float ssa = 0.0f, ssb = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    ssa += av[i] * av[i];
    ssb += bv[i] * bv[i];
  }
  const float inv_a = rsqrtf(block_sum(ssa, scratch) / cols + eps);
  const float inv_b = rsqrtf(block_sum(ssb, scratch) / cols + eps);
  // s overwrites av.
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) av[i] = av[i] * inv_a * ga[i];
  float sss = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    av[i] = (av[i] + bv[i] * inv_b * gb[i]) * 1.0f;
    sss += av[i] * av[i];
  }
  const float inv_s = rsqrtf(block_sum(sss, scratch) / cols + eps);
  float ss_res = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    const int64_t c = threadIdx.x + int64_t(i) * blockDim.x;
    if (c >= a.cols) continue;
    const float updated = (res[i] + av[i] * inv_s * gs[i]) * scale;
    mat_store(residual, r, c, updated);
    res[i] = stored_value(residual.dtype, updated);
    ss_res += res[i] * res[i];
  }
  if (!out.data) return;  // uniform over the block: no thread waits at a barrier alone
  const float inv_res = rsqrtf(block_sum(ss_res, scratch) / cols + eps);
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    const int64_t c = threadIdx.x + int64_t(i) * blockDim.x;
    if (c < a.cols) mat_store(out, r, c, res[i] * inv_res * go[i]);
  }
}

// Wider rows: the same passes over global memory; s is recomputed from a and
// b where it is needed (the same fp32 operations, so the same values).  The
// block_sum barrier before the last pass orders every read of a and b before
// out (which may alias them) is written.
__device__ __forceinline__ float pair_sum(const Mat& a, const Gain& a_gain, float inv_a, const Mat& b,
                                          const Gain& b_gain, float inv_b, int64_t r, int64_t c) {
  const float s = mat_load(a, r, c) * inv_a * gain_at(a_gain, c);
  return (s + mat_load(b, r, c) * inv_b * gain_at(b_gain, c)) * 1.0f;
}

__global__ void add_rms_norm_pair_kernel(Mat a, Gain a_gain, Mat b, Gain b_gain, Gain s_gain, Mat residual,
                                         float eps, float scale, Gain out_gain, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const float cols = static_cast<float>(a.cols);
  float ssa = 0.0f, ssb = 0.0f;
  for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
    const float x = mat_load(a, r, c), y = mat_load(b, r, c);
    ssa += x * x;
    ssb += y * y;
  }
  const float inv_a = rsqrtf(block_sum(ssa, scratch) / cols + eps);
  const float inv_b = rsqrtf(block_sum(ssb, scratch) / cols + eps);
  float sss = 0.0f;
  for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
    const float v = pair_sum(a, a_gain, inv_a, b, b_gain, inv_b, r, c);
    sss += v * v;
  }
  const float inv_s = rsqrtf(block_sum(sss, scratch) / cols + eps);
  float ss_res = 0.0f;
  for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x) {
    const float branch = pair_sum(a, a_gain, inv_a, b, b_gain, inv_b, r, c) * inv_s * gain_at(s_gain, c);
    mat_store(residual, r, c, (mat_load(residual, r, c) + branch) * scale);
    const float stored = mat_load(residual, r, c);
    ss_res += stored * stored;
  }
  if (!out.data) return;  // uniform over the block: no thread waits at a barrier alone
  const float inv_res = rsqrtf(block_sum(ss_res, scratch) / cols + eps);
  for (int64_t c = threadIdx.x; c < a.cols; c += blockDim.x)
    mat_store(out, r, c, mat_load(residual, r, c) * inv_res * gain_at(out_gain, c));
}

int threads_for(int64_t cols) { return cols >= 1024 ? 256 : 128; }

// The register kernels hold a row in 64-112 registers a thread (206-253 in
// all for the add and pair kernels), so one block fits on an SM: right for
// decode batches, where a row's latency is the cost, but a prompt's rows
// then go one at a time per SM (an 8k prefill's add_rms_norm moved ~1.7
// TB/s).  Above this many rows the pass kernels (23-29 registers, eight
// blocks an SM) take them; their sums run in the same order, so the values
// are the same.
constexpr int64_t kRegsMaxRows = 256;
bool regs_fit(const Mat& x) { return x.rows <= kRegsMaxRows && x.cols <= int64_t(threads_for(x.cols)) * kRowRegs; }

// Whether every tensor a register kernel reads is F32 (its kF32 instance:
// device_common.cuh).  Absent gains do not count.
bool all_f32(std::initializer_list<int32_t> dtypes) {
  for (int32_t d : dtypes)
    if (d != SEATRT_DTYPE_F32) return false;
  return true;
}
int32_t gain_dtype(const Gain& g) { return g.data ? g.dtype : SEATRT_DTYPE_F32; }

}  // namespace

int launch_add_rms_norm(Stream s, const Mat& x, Gain x_gain, const Mat& residual, float eps, float scale,
                        Gain out_gain, const Mat& out) {
  if (x.rows == 0 || x.cols == 0) return 0;
  if (regs_fit(x)) {
    const bool f32 = all_f32({x.dtype, residual.dtype, gain_dtype(x_gain), gain_dtype(out_gain)});
    (void)launch_pdl(f32 ? add_rms_norm_regs_kernel<true> : add_rms_norm_regs_kernel<false>,
        static_cast<unsigned>(x.rows), threads_for(x.cols), 0, cudaStream_t(s),
        x, x_gain, residual, eps, scale, out_gain, out);
    return last_error();
  }
  (void)launch_pdl(add_rms_norm_kernel, static_cast<unsigned>(x.rows), threads_for(x.cols), 0, cudaStream_t(s),
      x, x_gain, residual, eps, scale, out_gain, out);
  return last_error();
}

int launch_rms_norm_rope(Stream s, const View3& x, Gain gain, float eps, const int32_t* positions,
                         const float* inv_freq, const View3& out) {
  const int64_t rows = x.d0 * x.d1;
  if (rows == 0 || x.d2 == 0) return 0;
  const cudaStream_t st = cudaStream_t(s);
  // Many rows only: at decode (a few heads per token) a block per row
  // spreads the row's sincosf over 128 threads and the rows over as many
  // SMs; one warp per row measured 10.5 us per call there against 6.5.
  if (rows >= kWarpRowsMin && rows / kRowsPerBlock < (1u << 31)) {
    if (x.d2 == 64) return launch_rms_norm_rope_warp<2>(st, x, gain, eps, positions, inv_freq, out);
    if (x.d2 == 128) return launch_rms_norm_rope_warp<4>(st, x, gain, eps, positions, inv_freq, out);
    if (x.d2 == 256) return launch_rms_norm_rope_warp<8>(st, x, gain, eps, positions, inv_freq, out);
    if (x.d2 == 512) return launch_rms_norm_rope_warp<16>(st, x, gain, eps, positions, inv_freq, out);
  }
  const size_t shared = static_cast<size_t>(x.d2) * sizeof(float);
  (void)launch_pdl(rms_norm_rope_kernel, static_cast<unsigned>(rows), 128, shared, cudaStream_t(s),
      x, gain, eps, positions, inv_freq, out);
  return last_error();
}

int launch_rms_norm_multi(Stream s, const Mat& x, float eps, const NormOuts& outs) {
  if (x.rows == 0 || x.cols == 0) return 0;
  if (!regs_fit(x) && x.rows <= 0x7fffffff) {
    (void)launch_pdl(rms_norm_multi_kernel, static_cast<unsigned>(x.rows), threads_for(x.cols), 0, cudaStream_t(s), x,
                     eps, outs);
    return last_error();
  }
  if (x.cols <= int64_t(threads_for(x.cols)) * kRowRegs) {
    bool f32 = x.dtype == SEATRT_DTYPE_F32;
    for (int j = 0; j < outs.count; ++j) f32 = f32 && gain_dtype(outs.gain[j]) == SEATRT_DTYPE_F32;
    (void)launch_pdl(f32 ? rms_norm_multi_regs_kernel<true> : rms_norm_multi_regs_kernel<false>,
                     static_cast<unsigned>(x.rows), threads_for(x.cols), 0,
                     cudaStream_t(s), x, eps, outs);
    return last_error();
  }
  for (int j = 0; j < outs.count; ++j)
    if (int e = launch_rms_norm(s, x, outs.gain[j].data, outs.gain[j].dtype, eps, outs.out[j])) return e;
  return 0;
}

int launch_add_rms_norm_pair(Stream s, const Mat& a, Gain a_gain, const Mat& b, Gain b_gain, Gain s_gain,
                             const Mat& residual, float eps, float scale, Gain out_gain, const Mat& out) {
  if (a.rows == 0 || a.cols == 0) return 0;
  const int threads = threads_for(a.cols);
  const bool f32 = all_f32({a.dtype, b.dtype, residual.dtype, gain_dtype(a_gain), gain_dtype(b_gain),
                            gain_dtype(s_gain), gain_dtype(out_gain)});
  auto* kernel = !regs_fit(a) ? add_rms_norm_pair_kernel
                 : f32                                ? add_rms_norm_pair_regs_kernel<true>
                                                      : add_rms_norm_pair_regs_kernel<false>;
  (void)launch_pdl(kernel, static_cast<unsigned>(a.rows), threads, 0, cudaStream_t(s), a, a_gain, b, b_gain, s_gain,
                   residual, eps, scale, out_gain, out);
  return last_error();
}

}  // namespace seatrt::cuda
