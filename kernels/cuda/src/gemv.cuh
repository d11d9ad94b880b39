// The skinny-M weight kernel shared by linear and moe: one warp per output
// row; each lane streams 32 weights (16 bytes of E2M1 pairs, or the dense
// equivalent) per step, unpacks them in registers and multiplies them with up
// to kTile activation rows at once, so each weight byte is read once per tile.
//
// FP4 unpack: a 32-bit word holds 8 E2M1 codes, code i in bits 4i..4i+3.
// Shifting the word left by 4*(3-i) puts code i at bits 12..15 and code i+4
// at bits 28..31; `(t & 0x80008000) | ((t & 0x70007000) >> 3)` then is a
// half2 whose lanes are exactly fp4 * 2^-14 (sign to bit 15, the two exponent
// bits and the mantissa bit to the bottom of the fp16 exponent/top of the
// mantissa; code 1 becomes the subnormal 2^-15).  The factor 2^14 is put back
// through the group scale, so the math is exact before fp32 accumulation.
#pragma once

#include "device_common.cuh"

namespace seatrt::cuda {

constexpr int kGemvWarps = 4;
constexpr int kTile = 8;

// Which rows a block works on: a plain linear has one group (rows 0..M-1);
// MoE has one group per active expert, listed by the grouping kernel.
struct GemvGroups {
  const int32_t* active = nullptr;      // expert id per slot; null: one group
  const int32_t* num_active = nullptr;  // device scalar
  const int32_t* offsets = nullptr;     // [E+1] into sorted
  const int32_t* sorted = nullptr;      // assignment ids grouped by expert
  int64_t rows = 0;                     // the one group's size when active is null
};

struct GemvArgs {
  WeightRef w;                     // used when table is null
  WeightRef w_up;                  // GLU: the `up` weight when table_up is null
  const WeightRef* table = nullptr;
  const WeightRef* table_up = nullptr;
  bool glu = false;
  int32_t act = 0;
  int64_t n = 0, k = 0;
  Mat x;
  int32_t x_div = 1;               // activation row = assignment / x_div
  Mat out;                         // row = assignment
  const float* row_weight = nullptr;  // multiplies each assignment's output
  bool vec = false;                // weights and x allow 16-byte loads
  GemvGroups groups;
};

__device__ __forceinline__ float e4m3_to_float(uint8_t b) {
  __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E4M3);
  return __half2float(__half(h));
}

// 8 codes of one 32-bit word to floats (fp4 * 2^-14), in element order.
__device__ __forceinline__ void unpack8(uint32_t q, float* w) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t t = q << (4 * (3 - i));
    const uint32_t h = (t & 0x80008000u) | ((t & 0x70007000u) >> 3);
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h));
    w[i] = f.x;
    w[i + 4] = f.y;
  }
}

__device__ __forceinline__ float group_scale(const WeightRef& w, int64_t row, int64_t group) {
  const int64_t i = row * w.scale_row_elems + group;
  if (w.kind == int32_t(WeightKind::Fp4E4m3Scales))
    return e4m3_to_float(static_cast<const uint8_t*>(w.scales)[i]);
  return __bfloat162float(static_cast<const __nv_bfloat16*>(w.scales)[i]);
}

// 32 activations starting at element k0 of row r, as floats.
__device__ __forceinline__ void load_x32(const Mat& x, int64_t r, int64_t k0, float* v) {
  if (x.dtype == SEATRT_DTYPE_F32) {
    const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(x.data) + r * x.row_stride + k0);
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const float4 f = p[c];
      v[4 * c] = f.x; v[4 * c + 1] = f.y; v[4 * c + 2] = f.z; v[4 * c + 3] = f.w;
    }
  } else {
    const uint4* p = reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(x.data) + r * x.row_stride + k0);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      uint4 u = p[c];
      const __nv_bfloat162* b = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 f = __bfloat1622float2(b[j]);
        v[8 * c + 2 * j] = f.x;
        v[8 * c + 2 * j + 1] = f.y;
      }
    }
  }
}

// 32 weights of row `row` starting at k0 (a multiple of 32), each multiplied
// by its group scale, as floats.
__device__ __forceinline__ void load_w32(const WeightRef& w, int64_t row, int64_t k0, float* v) {
  const char* base = static_cast<const char*>(w.data) + row * w.data_row_bytes;
  switch (w.kind) {
    case int32_t(WeightKind::Fp4E4m3Scales):
    case int32_t(WeightKind::Fp4Bf16Scales): {
      const uint4 q = __ldg(reinterpret_cast<const uint4*>(base + k0 / 2));
      const float s0 = group_scale(w, row, k0 / 16) * 16384.0f;
      const float s1 = group_scale(w, row, k0 / 16 + 1) * 16384.0f;
      unpack8(q.x, v); unpack8(q.y, v + 8); unpack8(q.z, v + 16); unpack8(q.w, v + 24);
#pragma unroll
      for (int i = 0; i < 16; ++i) { v[i] *= s0; v[16 + i] *= s1; }
      break;
    }
    case int32_t(WeightKind::DenseBf16): {
      const uint4* p = reinterpret_cast<const uint4*>(base) + k0 / 8;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        uint4 u = __ldg(p + c);
        const __nv_bfloat162* b = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float2 f = __bfloat1622float2(b[j]);
          v[8 * c + 2 * j] = f.x; v[8 * c + 2 * j + 1] = f.y;
        }
      }
      break;
    }
    case int32_t(WeightKind::DenseF16): {
      const uint4* p = reinterpret_cast<const uint4*>(base) + k0 / 8;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        uint4 u = __ldg(p + c);
        const __half2* b = reinterpret_cast<const __half2*>(&u);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float2 f = __half22float2(b[j]);
          v[8 * c + 2 * j] = f.x; v[8 * c + 2 * j + 1] = f.y;
        }
      }
      break;
    }
    default: {
      const float4* p = reinterpret_cast<const float4*>(base) + k0 / 4;
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        const float4 f = __ldg(p + c);
        v[4 * c] = f.x; v[4 * c + 1] = f.y; v[4 * c + 2] = f.z; v[4 * c + 3] = f.w;
      }
    }
  }
}

// One weight (scale applied) for the ragged tail.
__device__ __forceinline__ float load_w1(const WeightRef& w, int64_t row, int64_t kk) {
  const char* base = static_cast<const char*>(w.data) + row * w.data_row_bytes;
  switch (w.kind) {
    case int32_t(WeightKind::Fp4E4m3Scales):
    case int32_t(WeightKind::Fp4Bf16Scales): {
      const uint8_t b = static_cast<const uint8_t*>(static_cast<const void*>(base))[kk / 2];
      const uint32_t code = (kk & 1) ? (b >> 4) : (b & 15u);
      const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
      const float v = mag[code & 7u];
      return ((code & 8u) ? -v : v) * group_scale(w, row, kk / 16);
    }
    case int32_t(WeightKind::DenseBf16):
      return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(base)[kk]);
    case int32_t(WeightKind::DenseF16):
      return __half2float(reinterpret_cast<const __half*>(base)[kk]);
    default:
      return reinterpret_cast<const float*>(base)[kk];
  }
}

// acc[m] += W[row] . x[xrow[m]] for the tile's valid rows.
__device__ __forceinline__ void dot_tile(const WeightRef& w, int64_t row, int64_t k, const Mat& x,
                                         const int64_t* xrow, int valid, bool vec, float* acc) {
  const int lane = threadIdx.x & 31;
  // 16-byte loads need 16-byte aligned rows (checked on the host: `vec`).
  const int64_t full = vec ? k / 32 : 0;
  for (int64_t c = lane; c < full; c += 32) {
    float wv[32];
    load_w32(w, row, c * 32, wv);
#pragma unroll
    for (int m = 0; m < kTile; ++m) {
      if (m < valid) {
        float xv[32];
        load_x32(x, xrow[m], c * 32, xv);
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < 32; ++i) s = fmaf(wv[i], xv[i], s);
        acc[m] += s;
      }
    }
  }
  for (int64_t kk = full * 32 + lane; kk < k; kk += 32) {
    const float wv = load_w1(w, row, kk);
#pragma unroll
    for (int m = 0; m < kTile; ++m)
      if (m < valid) acc[m] = fmaf(wv, mat_load(x, xrow[m], kk), acc[m]);
  }
}

}  // namespace seatrt::cuda
