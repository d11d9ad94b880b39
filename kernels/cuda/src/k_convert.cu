// F32 -> BF16 copy of an activation for the opt-in BF16 prefill
// (convert.hpp).  One block per row (grid-stride over rows), threads across
// the row: loads and stores coalesce, and the row's offset is computed once.
#include "convert.hpp"
#include "device_common.cuh"
#include "pdl.cuh"

namespace seatrt::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535LL * 16;

__global__ void f32_to_bf16_kernel(View3 src, __nv_bfloat16* dst) {
  const int64_t rows = src.d0 * src.d1;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* in = static_cast<const float*>(src.data) + (r / src.d1) * src.s0 + (r % src.d1) * src.s1;
    __nv_bfloat16* out = dst + r * src.d2;
    for (int64_t c = threadIdx.x; c < src.d2; c += blockDim.x) out[c] = __float2bfloat16_rn(in[c]);
  }
}

// F32 [rows, cols] -> `planes` contiguous BF16 planes [planes][rows][cols]:
// hi = bf16(x), mid = bf16(x - hi), lo = bf16(x - hi - mid).  Three are the
// value exactly (24 significant bits) barring underflow; two (hi, lo: the
// rounded remainder) are within 2^-16 of it.  Waits on the previous kernel
// (programmatic dependent launch) before reading x.
template <int kPlanes>
__global__ void f32_to_planes_kernel(Mat src, __nv_bfloat16* dst) {
  pdl_enter();
  const int64_t n = src.rows * src.cols;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / src.cols, c = i % src.cols;
    float v = static_cast<const float*>(src.data)[r * src.row_stride + c];
#pragma unroll
    for (int p = 0; p < kPlanes; ++p) {
      const __nv_bfloat16 b = __float2bfloat16_rn(v);
      dst[p * n + i] = b;
      v -= __bfloat162float(b);
    }
  }
}

// One thread per output element; plane order hi, (mid,) lo.
__global__ void sum_planes_kernel(const float* partials, int planes, Mat out) {
  pdl_enter();
  const int64_t n = out.rows * out.cols;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float v = partials[i];
    for (int p = 1; p < planes; ++p) v += partials[p * n + i];
    store_from_float(out.data, out.dtype, (i / out.cols) * out.row_stride + i % out.cols, v);
  }
}

}  // namespace

size_t plane_out_bytes(int64_t rows, int64_t n) {
  const size_t bytes = 3 * static_cast<size_t>(rows * n) * 4;
  return (bytes + 255) / 256 * 256;
}

int launch_sum_planes(Stream s, const float* partials, int planes, const Mat& out) {
  const int64_t n = out.rows * out.cols;
  if (n == 0) return 0;
  const int64_t blocks = ceil_div(n, kThreads);
  return static_cast<int>(launch_pdl(sum_planes_kernel, dim3(static_cast<unsigned>(blocks < 8192 ? blocks : 8192)),
                                     dim3(kThreads), 0, cudaStream_t(s), partials, planes, out));
}

size_t x_planes_bytes(const Mat& x) {
  const size_t bytes = 3 * static_cast<size_t>(x.rows * x.cols) * 2;
  return (bytes + 255) / 256 * 256;
}

int launch_to_planes(Stream s, const Mat& src, void* dst, int planes) {
  const int64_t n = src.rows * src.cols;
  if (n == 0) return 0;
  if (planes != 2 && planes != 3) return static_cast<int>(cudaErrorInvalidValue);
  const int64_t blocks = ceil_div(n, kThreads);
  return static_cast<int>(launch_pdl(planes == 2 ? f32_to_planes_kernel<2> : f32_to_planes_kernel<3>,
                                     dim3(static_cast<unsigned>(blocks < 4096 ? blocks : 4096)), dim3(kThreads), 0,
                                     cudaStream_t(s), src, static_cast<__nv_bfloat16*>(dst)));
}

size_t bf16_copy_bytes(const View3& v) {
  const size_t bytes = static_cast<size_t>(v.d0 * v.d1 * v.d2) * 2;
  return (bytes + 255) / 256 * 256;
}

View3 bf16_copy_view(const View3& src, void* dst) {
  View3 v = src;
  v.data = dst;
  v.dtype = SEATRT_DTYPE_BF16;
  v.s1 = src.d2;
  v.s0 = src.d1 * src.d2;
  return v;
}

int launch_to_bf16(Stream s, const View3& src, void* dst) {
  const int64_t rows = src.d0 * src.d1;
  if (rows == 0 || src.d2 == 0) return 0;
  const unsigned blocks = static_cast<unsigned>(rows < kMaxBlocks ? rows : kMaxBlocks);
  f32_to_bf16_kernel<<<blocks, kThreads, 0, cudaStream_t(s)>>>(src, static_cast<__nv_bfloat16*>(dst));
  return last_error();
}

View3 view3_of(const Mat& m) {
  View3 v;
  v.data = m.data;
  v.dtype = m.dtype;
  v.d0 = m.rows;
  v.d1 = 1;
  v.d2 = m.cols;
  v.s0 = m.row_stride;
  v.s1 = m.cols;
  return v;
}

}  // namespace seatrt::cuda
