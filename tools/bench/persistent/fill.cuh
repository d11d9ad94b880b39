// Synthetic weights filled on the device (hash of index and seed): random
// E2M1 bytes, E4M3 scales in [0.5, 1.875], bf16 uniform values, constants.
#pragma once
#include <cuda_bf16.h>
#include <cstdint>

namespace pk {

__device__ __forceinline__ uint32_t hash32(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
  return static_cast<uint32_t>(x);
}
__global__ void fill_u8(uint8_t* p, size_t n, uint64_t seed, uint32_t and_mask, uint32_t or_mask) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = static_cast<uint8_t>((hash32(seed * 0x9E3779B97F4A7C15ull + i) & and_mask) | or_mask);
}
__global__ void fill_bf16(__nv_bfloat16* p, size_t n, uint64_t seed, float amp) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16_rn(amp * ((hash32(seed * 0x9E3779B97F4A7C15ull + i) & 0xFFFFFF) / 8388608.0f - 1.0f));
}
__global__ void fill_f32(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}
__global__ void fill_f32_nan(float* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __int_as_float(0x7fc00000);
}

}  // namespace pk
