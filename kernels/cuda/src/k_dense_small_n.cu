// Dense BF16 weights with few output features (Gemma-4's router: 128 x 2816)
// and a decode-sized batch.  The general kernels give each block a tile of
// output rows, so 128 features fill only 8-32 blocks of 132 SMs and one call
// took 31 us at batch 1 and 359 us at batch 32 on the H200 (30 per step).
// Here one block of 256 threads owns one output feature: the weight row is
// read once per pass of up to kRows activation rows (8, or 32 above 8 rows:
// each pass is a chain of L2 loads, a reduction and a barrier, and four
// passes at batch 32 took 28 us per call under ncu, 2026-12-01), each thread
// covers K in 16-byte pieces, and the block reduces in fp32.
#include "device_common.cuh"
#include "pdl.cuh"
#include "launch.hpp"

namespace seatrt::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ void load_x8(const Mat& x, int64_t row, int64_t col, float (&f)[8]) {
  if (x.dtype == SEATRT_DTYPE_F32) {
    const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(x.data) + row * x.row_stride + col);
    const float4 a = p[0], b = p[1];
    f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
  } else {
    bf16x8_to_float(*reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(x.data) + row * x.row_stride + col),
                    f);
  }
}

template <int kRows>
__global__ void __launch_bounds__(kThreads) dense_small_n_kernel(const __nv_bfloat16* w, int64_t w_row_elems,
                                                                  int64_t k, Mat x, Mat out) {
  constexpr int kRowsPerPass = kRows;
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t n = blockIdx.x;
  const __nv_bfloat16* wr = w + n * w_row_elems;
  __shared__ float partial[kThreads / 32][kRowsPerPass];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t m0 = 0; m0 < x.rows; m0 += kRowsPerPass) {
    const int64_t left = x.rows - m0;
    const int rows = left < kRowsPerPass ? static_cast<int>(left) : kRowsPerPass;
    float acc[kRowsPerPass] = {};
    for (int64_t c = int64_t(threadIdx.x) * 8; c < k; c += int64_t(kThreads) * 8) {
      float wf[8];
      bf16x8_to_float(*reinterpret_cast<const uint4*>(wr + c), wf);
#pragma unroll
      for (int r = 0; r < kRowsPerPass; ++r) {
        if (r >= rows) break;
        float xf[8];
        load_x8(x, m0 + r, c, xf);
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[r] = fmaf(wf[j], xf[j], acc[r]);
      }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerPass; ++r) {
      const float s = warp_sum(acc[r]);
      if (lane == 0) partial[warp][r] = s;
    }
    __syncthreads();
    if (threadIdx.x < rows) {
      float s = 0.0f;
#pragma unroll
      for (int w8 = 0; w8 < kThreads / 32; ++w8) s += partial[w8][threadIdx.x];
      mat_store(out, m0 + threadIdx.x, n, s);
    }
    __syncthreads();
  }
}

}  // namespace

bool dense_small_n_fits(const WeightRef& w, const GemvProblem& p) {
  const int64_t x_elem = p.x.dtype == SEATRT_DTYPE_F32 ? 4 : p.x.dtype == SEATRT_DTYPE_BF16 ? 2 : 0;
  return w.kind == int32_t(WeightKind::DenseBf16) && x_elem != 0 && p.n <= kDenseSmallNMaxFeatures &&
         p.x.rows <= kDenseSmallNMaxRows && p.k % 8 == 0 && w.data_row_bytes % 16 == 0 &&
         reinterpret_cast<uintptr_t>(w.data) % 16 == 0 && reinterpret_cast<uintptr_t>(p.x.data) % 16 == 0 &&
         (p.x.row_stride * x_elem) % 16 == 0;
}

int launch_dense_small_n(Stream s, const WeightRef& w, const GemvProblem& p) {
  (void)launch_pdl(p.x.rows <= 8 ? dense_small_n_kernel<8> : dense_small_n_kernel<32>, static_cast<unsigned>(p.n),
                   kThreads, 0, static_cast<cudaStream_t>(s), static_cast<const __nv_bfloat16*>(w.data),
                   w.data_row_bytes / 2, p.k, p.x, p.out);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace seatrt::cuda
