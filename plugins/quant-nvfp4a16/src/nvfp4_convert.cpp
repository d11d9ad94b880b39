#include "nvfp4_convert.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "seatrt/tensor.h"

namespace seatrt::nvfp4 {

float e2m1_to_f32(uint8_t code) {
  static constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float m = kMagnitude[code & 0x7u];
  return (code & 0x8u) ? -m : m;
}

float e4m3_to_f32(uint8_t bits) {
  const int exp = (bits >> 3) & 0xF;
  const int mant = bits & 0x7;
  float magnitude;
  if (exp == 15 && mant == 7)
    magnitude = std::numeric_limits<float>::quiet_NaN();
  else if (exp == 0)
    magnitude = std::ldexp(static_cast<float>(mant), -9);
  else
    magnitude = std::ldexp(static_cast<float>(8 + mant), exp - 10);
  return (bits & 0x80u) ? -magnitude : magnitude;
}

float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

float f16_to_f32(uint16_t bits) {
  const uint32_t exp = (bits >> 10) & 0x1Fu;
  const uint32_t mant = bits & 0x3FFu;
  float m;
  if (exp == 0)
    m = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    m = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    m = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  return (bits & 0x8000u) ? -m : m;
}

void dequantize(const PackedWeight& w, float* out) {
  const auto rows = static_cast<std::size_t>(w.out_features);
  const auto cols = static_cast<std::size_t>(w.in_features);
  const std::size_t groups = cols / 16;
  for (std::size_t r = 0; r < rows; ++r) {
    const uint8_t* packed_row = w.packed + r * (cols / 2);
    const uint8_t* scale_row = w.scales + r * groups;
    float* out_row = out + r * cols;
    for (std::size_t g = 0; g < groups; ++g) {
      const float step = e4m3_to_f32(scale_row[g]) / w.global_scale;
      for (std::size_t j = 0; j < 8; ++j) {
        const uint8_t byte = packed_row[g * 8 + j];
        out_row[g * 16 + 2 * j] = e2m1_to_f32(byte & 0x0Fu) * step;
        out_row[g * 16 + 2 * j + 1] = e2m1_to_f32(static_cast<uint8_t>(byte >> 4)) * step;
      }
    }
  }
}

bool dense_to_f32(int32_t dtype, const void* data, std::size_t count, float* out) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (dtype == SEATRT_DTYPE_F32) {
    std::memcpy(out, data, count * 4);
    return true;
  }
  if (dtype != SEATRT_DTYPE_BF16 && dtype != SEATRT_DTYPE_F16) return false;
  for (std::size_t i = 0; i < count; ++i) {
    uint16_t v;
    std::memcpy(&v, bytes + 2 * i, 2);
    out[i] = dtype == SEATRT_DTYPE_BF16 ? bf16_to_f32(v) : f16_to_f32(v);
  }
  return true;
}

}  // namespace seatrt::nvfp4
