// Large-M linear (prefill) on the tensor cores: 64x64 output tiles, K in
// steps of 32.  Each step decodes a 64x32 weight tile to BF16 in shared
// memory (exact: an E2M1 value times an E4M3 scale has at most 6 significant
// bits), stages the 64x32 BF16 activation tile, and 4 warps run 16x16x16
// BF16 MMAs (nvcuda::wmma) into fp32 accumulators.  The global divisor is
// applied once in the epilogue (BF16 dense weights are copied as they are).  Used for BF16 activations only, so no
// rounding of the inputs happens here.  Not yet wgmma/TMA (see README).
#include <mma.h>

#include "gemv.cuh"

namespace seatrt::cuda {
namespace {

constexpr int kBM = 64, kBN = 64, kBK = 32, kPad = 8, kThreads = 128;

__global__ void __launch_bounds__(kThreads) gemm_tc_kernel(WeightRef w, int64_t n, int64_t k, Mat x, Mat out,
                                                           bool vec) {
  using namespace nvcuda;
  __shared__ __align__(32) __nv_bfloat16 xs[kBM][kBK + kPad];
  __shared__ __align__(32) __nv_bfloat16 ws[kBN][kBK + kPad];
  __shared__ __align__(32) float cs[kBM][kBN + 4];
  const int t = threadIdx.x, warp = t >> 5;
  const int64_t m0 = int64_t(blockIdx.y) * kBM, n0 = int64_t(blockIdx.x) * kBN;
  const int wm = warp / 2, wn = warp % 2;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const bool fp4 = w.kind <= int32_t(WeightKind::Fp4Bf16Scales);
  // Thread t loads 16 consecutive k of one row (t / 2) of each tile.
  const int r = t / 2, kh = (t % 2) * 16;
  for (int64_t k0 = 0; k0 < k; k0 += kBK) {
    const int64_t kk = k0 + kh;
    {  // activations
      const int64_t row = m0 + r;
      const __nv_bfloat16* src = static_cast<const __nv_bfloat16*>(x.data) + row * x.row_stride + kk;
      if (row < x.rows && vec && kk + 16 <= k) {
        *reinterpret_cast<uint4*>(&xs[r][kh]) = *reinterpret_cast<const uint4*>(src);
        *reinterpret_cast<uint4*>(&xs[r][kh + 8]) = *reinterpret_cast<const uint4*>(src + 8);
      } else {
        for (int i = 0; i < 16; ++i)
          xs[r][kh + i] = (row < x.rows && kk + i < k) ? src[i] : __float2bfloat16_rn(0.0f);
      }
    }
    {  // weights
      const int64_t row = n0 + r;
      if (row < n && fp4 && vec && kk + 16 <= k) {
        const uint2 q = __ldg(reinterpret_cast<const uint2*>(static_cast<const char*>(w.data) + row * w.data_row_bytes + kk / 2));
        const float s = group_scale(w, row, kk / 16) * 16384.0f;
        float v[16];
        unpack8(q.x, v);
        unpack8(q.y, v + 8);
#pragma unroll
        for (int i = 0; i < 16; ++i) ws[r][kh + i] = __float2bfloat16_rn(v[i] * s);
      } else if (row < n && w.kind == int32_t(WeightKind::DenseBf16) && vec && kk + 16 <= k) {
        const uint4* src = reinterpret_cast<const uint4*>(static_cast<const char*>(w.data) + row * w.data_row_bytes) + kk / 8;
        *reinterpret_cast<uint4*>(&ws[r][kh]) = __ldg(src);
        *reinterpret_cast<uint4*>(&ws[r][kh + 8]) = __ldg(src + 1);
      } else {
        for (int i = 0; i < 16; ++i)
          ws[r][kh + i] = __float2bfloat16_rn((row < n && kk + i < k) ? load_w1(w, row, kk + i) : 0.0f);
      }
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kBK; ks += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &xs[wm * 32 + i * 16][ks], kBK + kPad);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &ws[wn * 32 + j * 16][ks], kBK + kPad);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], kBN + 4, wmma::mem_row_major);
  __syncthreads();
  const float inv_scale_div = w.global_divisor;
  for (int i = t; i < kBM * kBN; i += kThreads) {
    const int rr = i / kBN, cc = i % kBN;
    const int64_t row = m0 + rr, col = n0 + cc;
    if (row < x.rows && col < n) mat_store(out, row, col, cs[rr][cc] / inv_scale_div);
  }
}

}  // namespace

int launch_linear_tc(Stream s, const WeightRef& w, const GemvProblem& p, bool vec) {
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, kBN)), static_cast<unsigned>(ceil_div(p.x.rows, kBM)));
  gemm_tc_kernel<<<grid, kThreads, 0, cudaStream_t(s)>>>(w, p.n, p.k, p.x, p.out, vec);
  return last_error();
}

}  // namespace seatrt::cuda
