// Header-only repack of NVFP4 compressed-tensors scales into the
// SEATRT_LAYOUT_NVFP4_SM90_TILED layout (kernels/cuda/README.md), for the
// quantization plugin.  Pure C++, no CUDA.
//
// The data (E2M1X2 [out, in/2]) is unchanged.  The global divisor gs is split
// as gs = m * 2^j with m in [1, 2); each E4M3 group scale s becomes the BF16
// value s * 2^-j (exact: s has 4 significant bits, bf16 has 8, and the
// exponent range of bf16 is fp32's), and the weight's global_scale becomes m.
// So w = fp4 * s / gs = fp4 * (s * 2^-j) / m exactly, with no rounding.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace seatrt_cuda {

// The value of an OCP E4M3FN byte (bias 7, no infinities, 0x7F/0xFF NaN).
inline float e4m3_value(uint8_t b) {
  const int sign = (b >> 7) & 1, exp = (b >> 3) & 15, man = b & 7;
  if (exp == 15 && man == 7) return std::nanf("");
  const float mag = exp == 0 ? std::ldexp(static_cast<float>(man), -9)
                             : std::ldexp(1.0f + static_cast<float>(man) / 8.0f, exp - 7);
  return sign ? -mag : mag;
}

// BF16 bits of a float that bf16 holds exactly (the caller guarantees it).
inline uint16_t exact_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0xFFFFu) != 0) throw std::logic_error("value is not exact in bf16");
  return static_cast<uint16_t>(u >> 16);
}

struct Sm90TiledScales {
  std::vector<uint16_t> bf16_scales;  // [out, in/16], BF16 bits
  float global_scale = 1.0f;          // the remaining divisor m in [1, 2)
};

// e4m3_scales: [out * in/16] bytes, row-major; global_scale: CT's divisor.
inline Sm90TiledScales repack_nvfp4_sm90_tiled(const uint8_t* e4m3_scales, size_t count, float global_scale) {
  if (!(global_scale > 0.0f) || !std::isfinite(global_scale))
    throw std::invalid_argument("NVFP4 global scale must be finite and > 0");
  int j = 0;
  const float m = 2.0f * std::frexp(global_scale, &j);  // global = (m/2) * 2^j, m/2 in [0.5, 1)
  j -= 1;                                               // global = m * 2^j, m in [1, 2)
  Sm90TiledScales out;
  out.global_scale = m;
  out.bf16_scales.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const float s = e4m3_value(e4m3_scales[i]);
    if (std::isnan(s)) throw std::invalid_argument("NVFP4 group scale is NaN");
    out.bf16_scales[i] = exact_bf16_bits(std::ldexp(s, -j));
  }
  return out;
}

}  // namespace seatrt_cuda
