// Simple memory-bound kernels: elementwise, embedding, rms_norm, glu, rope,
// gather_rows.  One grid-stride loop each; math in fp32.
#include "device_common.cuh"
#include "pdl.cuh"

namespace seatrt::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  int64_t b = ceil_div(n, kThreads);
  if (b > 65535LL * 16) b = 65535LL * 16;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

__global__ void elementwise_kernel(int op, Mat a, Mat b, float alpha, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t n = a.rows * a.cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / a.cols, c = i % a.cols;
    const float x = mat_load(a, r, c);
    float y;
    switch (op) {
      case 0: y = x + mat_load(b, r % b.rows, c); break;
      case 1: y = x * mat_load(b, r % b.rows, c); break;
      case 2: y = x * alpha; break;
      case 3: y = alpha * tanhf(x / alpha); break;
      default: y = x; break;
    }
    mat_store(out, r, c, y);
  }
}

__global__ void embedding_kernel(const int32_t* ids, int64_t count, Mat table, float scale, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t n = count * table.cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / table.cols, c = i % table.cols;
    const int32_t id = ids[t];
    // Out-of-range ids cannot be reported from here; they read as zeros.
    const float v = (id >= 0 && id < table.rows) ? mat_load(table, id, c) * scale : 0.0f;
    mat_store(out, t, c, v);
  }
}

// One block per row.
__global__ void rms_norm_kernel(Mat x, const void* weight, int32_t wdtype, float eps, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const float inv = row_inv_rms(x, r, eps, scratch);
  for (int64_t c = threadIdx.x; c < x.cols; c += blockDim.x) {
    float v = mat_load(x, r, c) * inv;
    if (weight) v *= load_as_float(weight, wdtype, c);
    mat_store(out, r, c, v);
  }
}

// The same for rows of at most kRowRegs x blockDim.x columns, held in
// registers: one load latency per row instead of one per element per pass
// (a 2816-wide row took ~12 us with the loops above, at batch 1 on the H200).
template <bool kF32>
__global__ void rms_norm_regs_kernel(Mat x, const void* weight, int32_t wdtype, float eps, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  float v[kRowRegs], g[kRowRegs];
  load_row_regs<kF32>(x, r, v);
  load_gain_regs<kF32>(weight, wdtype, x.cols, g);
  float ss = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) ss += v[i] * v[i];
  const float inv = rsqrtf(block_sum(ss, scratch) / static_cast<float>(x.cols) + eps);
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    const int64_t c = threadIdx.x + int64_t(i) * blockDim.x;
    if (c < x.cols) mat_store(out, r, c, v[i] * inv * g[i]);
  }
}

// Head-sized rows (cols = 32 * kPer): one warp per row, 8 rows per block, a
// shuffle sum and no block barrier (the per-head norms run one row per
// (token, head): at prompt length a block per row was ~2x their bytes).
constexpr int kRowsPerBlock = 8;
constexpr int64_t kWarpRowsMin = 4096;

template <int kPer>
__global__ void __launch_bounds__(kRowsPerBlock * 32)
    rms_norm_warp_kernel(Mat x, const void* weight, int32_t wdtype, float eps, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int lane = threadIdx.x & 31;
  const int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (r >= x.rows) return;  // whole warps: the shuffles below see full warps
  float v[kPer];
  float ss = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    v[j] = mat_load(x, r, lane + 32 * j);
    ss += v[j] * v[j];
  }
  const float inv = rsqrtf(warp_sum(ss) / static_cast<float>(32 * kPer) + eps);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int64_t c = lane + 32 * j;
    float y = v[j] * inv;
    if (weight) y *= load_as_float(weight, wdtype, c);
    mat_store(out, r, c, y);
  }
}

template <int kPer>
int launch_rms_norm_warp(cudaStream_t st, const Mat& x, const void* weight, int32_t weight_dtype, float eps,
                         const Mat& out) {
  const auto blocks = static_cast<unsigned>((x.rows + kRowsPerBlock - 1) / kRowsPerBlock);
  (void)launch_pdl(rms_norm_warp_kernel<kPer>, blocks, kRowsPerBlock * 32, 0, st, x, weight, weight_dtype, eps, out);
  return last_error();
}

__global__ void glu_kernel(int act, Mat gate, Mat up, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t n = gate.rows * gate.cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / gate.cols, c = i % gate.cols;
    mat_store(out, r, c, activation(act, mat_load(gate, r, c)) * mat_load(up, r, c));
  }
}

// One thread per rotated pair (t, head, i < D/2).
__global__ void rope_kernel(View3 x, const int32_t* positions, const float* inv_freq, View3 out) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t half = x.d2 / 2;
  const int64_t n = x.d0 * x.d1 * half;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t p = i % half, h = (i / half) % x.d1, t = i / (half * x.d1);
    const int64_t xi = t * x.s0 + h * x.s1, oi = t * out.s0 + h * out.s1;
    const float a = load_as_float(x.data, x.dtype, xi + p);
    const float b = load_as_float(x.data, x.dtype, xi + p + half);
    const float f = inv_freq[p];
    float s = 0.0f, c = 1.0f;
    if (f != 0.0f) sincosf(static_cast<float>(positions[t]) * f, &s, &c);
    store_from_float(out.data, out.dtype, oi + p, a * c - b * s);
    store_from_float(out.data, out.dtype, oi + p + half, b * c + a * s);
  }
}

__global__ void gather_rows_kernel(Mat x, const int32_t* index, Mat out) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t n = out.rows * out.cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / out.cols, c = i % out.cols;
    const int32_t src = index[r];
    mat_store(out, r, c, (src >= 0 && src < x.rows) ? mat_load(x, src, c) : 0.0f);
  }
}

}  // namespace

int launch_elementwise(Stream s, int op, const Mat& a, const Mat& b, float alpha, const Mat& out) {
  (void)launch_pdl(elementwise_kernel, grid_for(a.rows * a.cols), kThreads, 0, cudaStream_t(s), op, a, b, alpha, out);
  return last_error();
}

int launch_embedding(Stream s, const int32_t* ids, int64_t count, const Mat& table, float scale,
                     const Mat& out) {
  if (count == 0) return 0;
  (void)launch_pdl(embedding_kernel, grid_for(count * table.cols), kThreads, 0, cudaStream_t(s),
      ids, count, table, scale, out);
  return last_error();
}

int launch_rms_norm(Stream s, const Mat& x, const void* weight, int32_t weight_dtype, float eps,
                    const Mat& out) {
  if (x.rows == 0) return 0;
  const cudaStream_t st = cudaStream_t(s);
  // Many rows only (prompts): decode-sized calls keep the block-per-row
  // kernels, which spread a few rows over as many SMs.
  if (x.rows >= kWarpRowsMin && x.rows / kRowsPerBlock < (1u << 31)) {
    if (x.cols == 64) return launch_rms_norm_warp<2>(st, x, weight, weight_dtype, eps, out);
    if (x.cols == 128) return launch_rms_norm_warp<4>(st, x, weight, weight_dtype, eps, out);
    if (x.cols == 256) return launch_rms_norm_warp<8>(st, x, weight, weight_dtype, eps, out);
    if (x.cols == 512) return launch_rms_norm_warp<16>(st, x, weight, weight_dtype, eps, out);
  }
  const int threads = x.cols >= 1024 ? 256 : 128;
  if (x.cols <= int64_t(threads) * kRowRegs) {
    const bool f32 = x.dtype == SEATRT_DTYPE_F32 && (!weight || weight_dtype == SEATRT_DTYPE_F32);
    (void)launch_pdl(f32 ? rms_norm_regs_kernel<true> : rms_norm_regs_kernel<false>, static_cast<unsigned>(x.rows),
        threads, 0, cudaStream_t(s),
        x, weight, weight_dtype, eps, out);
    return last_error();
  }
  (void)launch_pdl(rms_norm_kernel, static_cast<unsigned>(x.rows), threads, 0, cudaStream_t(s),
      x, weight, weight_dtype, eps, out);
  return last_error();
}

int launch_glu(Stream s, int act, const Mat& gate, const Mat& up, const Mat& out) {
  if (gate.rows * gate.cols == 0) return 0;
  (void)launch_pdl(glu_kernel, grid_for(gate.rows * gate.cols), kThreads, 0, cudaStream_t(s), act, gate, up, out);
  return last_error();
}

int launch_rope(Stream s, const View3& x, const int32_t* positions, const float* inv_freq,
                const View3& out) {
  const int64_t n = x.d0 * x.d1 * (x.d2 / 2);
  if (n == 0) return 0;
  (void)launch_pdl(rope_kernel, grid_for(n), kThreads, 0, cudaStream_t(s), x, positions, inv_freq, out);
  return last_error();
}

int launch_gather_rows(Stream s, const Mat& x, const int32_t* index, const Mat& out) {
  if (out.rows * out.cols == 0) return 0;
  (void)launch_pdl(gather_rows_kernel, grid_for(out.rows * out.cols), kThreads, 0, cudaStream_t(s), x, index, out);
  return last_error();
}

}  // namespace seatrt::cuda
