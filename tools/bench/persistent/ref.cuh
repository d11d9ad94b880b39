// Straightforward reference kernels for the check mode: one thread per
// output, plain dequantisation (fp4 value * e4m3 scale / gdiv) and fp32 sums.
#pragma once
#include <cuda_bf16.h>
#include "sync.cuh"

namespace pk {

__device__ __forceinline__ float fp4_value(uint32_t c) {
  const float t[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  return (c & 8) ? -t[c & 7] : t[c & 7];
}
// out[j][n] = sum_k x[row(j)][k] W[n][k]; W NVFP4 (data/scl) or bf16 (wb).
__global__ void ref_linear(const uint8_t* data, const uint8_t* scl, const __nv_bfloat16* wb, float gdiv, int N, int K,
                           const __nv_bfloat16* x, int xstride, const int* rows, int cnt, float* out) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (n >= N || j >= cnt) return;
  const __nv_bfloat16* xr = x + size_t(rows ? rows[j] : j) * xstride;
  float s = 0.f;
  for (int k = 0; k < K; ++k) {
    float w;
    if (wb) {
      w = __bfloat162float(wb[size_t(n) * K + k]);
    } else {
      const uint8_t byte = data[size_t(n) * (K / 2) + k / 2];
      w = fp4_value((k & 1) ? byte >> 4 : byte & 15) * e4m3f(scl[size_t(n) * (K / 16) + k / 16]) / gdiv;
    }
    s += w * __bfloat162float(xr[k]);
  }
  out[size_t(j) * N + n] = s;
}

}  // namespace pk
