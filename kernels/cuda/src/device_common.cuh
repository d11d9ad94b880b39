// Device helpers shared by the kernels: dtype-generic loads and stores (the
// dtype is a launch-uniform value, so the switch does not diverge), error
// plumbing and reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "launch.hpp"
#include "seatrt/tensor.h"

namespace seatrt::cuda {

__device__ __forceinline__ float load_as_float(const void* base, int32_t dtype, int64_t i) {
  switch (dtype) {
    case SEATRT_DTYPE_F32:
      return static_cast<const float*>(base)[i];
    case SEATRT_DTYPE_BF16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case SEATRT_DTYPE_F16:
      return __half2float(static_cast<const __half*>(base)[i]);
    case SEATRT_DTYPE_F8_E4M3: {
      __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<const __nv_fp8_storage_t*>(base)[i],
                                              __NV_E4M3);
      return __half2float(__half(h));
    }
    default:
      return 0.0f;
  }
}

__device__ __forceinline__ void store_from_float(void* base, int32_t dtype, int64_t i, float v) {
  switch (dtype) {
    case SEATRT_DTYPE_F32:
      static_cast<float*>(base)[i] = v;
      break;
    case SEATRT_DTYPE_BF16:
      static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
      break;
    case SEATRT_DTYPE_F16:
      static_cast<__half*>(base)[i] = __float2half_rn(v);
      break;
    case SEATRT_DTYPE_F8_E4M3:
      static_cast<__nv_fp8_storage_t*>(base)[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
      break;
    default:
      break;
  }
}

__device__ __forceinline__ float mat_load(const Mat& m, int64_t r, int64_t c) {
  return load_as_float(m.data, m.dtype, r * m.row_stride + c);
}
__device__ __forceinline__ void mat_store(const Mat& m, int64_t r, int64_t c, float v) {
  store_from_float(m.data, m.dtype, r * m.row_stride + c, v);
}

// The value a store of v into `dtype` leaves (what a later load reads back).
__device__ __forceinline__ float stored_value(int32_t dtype, float v) {
  switch (dtype) {
    case SEATRT_DTYPE_BF16: return __bfloat162float(__float2bfloat16_rn(v));
    case SEATRT_DTYPE_F16: return __half2float(__float2half_rn(v));
    case SEATRT_DTYPE_F8_E4M3: {
      const __nv_fp8_storage_t q = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(q, __NV_E4M3)));
    }
    default: return v;
  }
}

// A row of up to kRowRegs x blockDim.x elements held in registers: thread t
// owns columns t, t + blockDim.x, ... (the strided order the one-pass row
// kernels sum in, so their sums match the multi-pass loops bit for bit).
// Every load is issued before any is used, so a short row costs one memory
// latency instead of one per element.
//
// kF32 (every tensor the kernel reads is F32, known at compile time): plain
// float loads.  Through load_as_float's runtime dtype switch the compiler
// waits for all of one array's loads where the switch's branches meet, so a
// one-row kernel paid a memory latency per array it read (ncu, 2026-12-01,
// one batch-1 row: x + 1 gain 3.6 us, x + residual + 2 gains 8.9 us, a, b,
// residual + 4 gains 14.9 us).
constexpr int kRowRegs = 16;
template <bool kF32 = false>
__device__ __forceinline__ float load_elem(const void* base, int32_t dtype, int64_t i) {
  if constexpr (kF32) return static_cast<const float*>(base)[i];
  else return load_as_float(base, dtype, i);
}
template <bool kF32 = false>
__device__ __forceinline__ void load_row_regs(const Mat& m, int64_t r, float (&v)[kRowRegs]) {
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    const int64_t c = threadIdx.x + int64_t(i) * blockDim.x;
    v[i] = c < m.cols ? load_elem<kF32>(m.data, m.dtype, r * m.row_stride + c) : 0.0f;
  }
}
template <bool kF32 = false>
__device__ __forceinline__ void load_gain_regs(const void* g, int32_t dtype, int64_t cols, float (&v)[kRowRegs]) {
#pragma unroll
  for (int i = 0; i < kRowRegs; ++i) {
    const int64_t c = threadIdx.x + int64_t(i) * blockDim.x;
    v[i] = (g && c < cols) ? load_elem<kF32>(g, dtype, c) : 1.0f;
  }
}

// Eight BF16 values (one 16-byte load) as floats, in order.
__device__ __forceinline__ void bf16x8_to_float(const uint4& u, float (&f)[8]) {
  const __nv_bfloat162* b = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 v = __bfloat1622float2(b[j]);
    f[2 * j] = v.x;
    f[2 * j + 1] = v.y;
  }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over a block of up to 1024 threads; every thread gets the result.
// `scratch` holds 32 floats of shared memory.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int nwarps = (blockDim.x + 31) >> 5;
  float t = lane < nwarps ? scratch[lane] : 0.0f;
  return warp_sum(t);
}
// 1 / sqrt(mean(x[r]^2) + eps) for a block per row: each thread sums the
// squares of columns threadIdx.x, + blockDim.x, ..., then block_sum (the
// order every pass kernel of a norm shares, so their values agree).
__device__ __forceinline__ float row_inv_rms(const Mat& x, int64_t r, float eps, float* scratch) {
  float ss = 0.0f;
  for (int64_t c = threadIdx.x; c < x.cols; c += blockDim.x) {
    const float v = mat_load(x, r, c);
    ss += v * v;
  }
  return rsqrtf(block_sum(ss, scratch) / static_cast<float>(x.cols) + eps);
}
__device__ __forceinline__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int nwarps = (blockDim.x + 31) >> 5;
  float t = lane < nwarps ? scratch[lane] : -INFINITY;
  return warp_max(t);
}

__device__ __forceinline__ float activation(int act, float z) {
  switch (act) {
    case 0: {  // GELU tanh
      const float k0 = 0.7978845608028654f;  // sqrt(2/pi)
      return 0.5f * z * (1.0f + tanhf(k0 * (z + 0.044715f * z * z * z)));
    }
    case 1:  // SiLU
      return z / (1.0f + expf(-z));
    default:  // GELU erf
      return 0.5f * z * (1.0f + erff(z * 0.7071067811865476f));
  }
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int last_error() { return static_cast<int>(cudaGetLastError()); }

}  // namespace seatrt::cuda
