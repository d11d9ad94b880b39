#include "dtype.hpp"
#include "seatrt/cpp/dtype.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace seatrt::cpu {

float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t f32_to_bf16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15u + 127u) << 23) | (mant << 13));
}

uint16_t f32_to_f16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t absx = x & 0x7FFFFFFFu;
  if (absx > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // NaN
  if (absx >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to inf
  if (absx < 0x38800000u) {
    // Subnormal result: units of 2^-24; the product is exact in double.
    const double units = static_cast<double>(std::bit_cast<float>(absx)) * 16777216.0;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(units)));
  }
  uint32_t h = (((absx >> 23) - 127u + 15u) << 10) | ((absx & 0x7FFFFFu) >> 13);
  const uint32_t rest = absx & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carry may bump the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

float e4m3_to_f32(uint8_t bits) {
  const bool negative = (bits & 0x80u) != 0;
  const int exp = (bits >> 3) & 0xF;
  const int mant = bits & 0x7;
  float magnitude;
  if (exp == 15 && mant == 7) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), -9);  // mant/8 * 2^-6
  } else {
    magnitude = std::ldexp(static_cast<float>(8 + mant), exp - 7 - 3);  // (1 + mant/8) * 2^(exp-7)
  }
  return negative ? -magnitude : magnitude;
}

uint8_t f32_to_e4m3(float value) {
  const uint8_t sign = std::signbit(value) ? 0x80u : 0x00u;
  if (std::isnan(value)) return static_cast<uint8_t>(sign | 0x7Fu);
  const double a = std::fabs(static_cast<double>(value));
  if (a >= 448.0) return static_cast<uint8_t>(sign | 0x7Eu);
  if (a < 0.015625) {  // below 2^-6: subnormal grid of 2^-9; 8 units = the smallest normal (code 8)
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::nearbyint(a * 512.0)));
  }
  int e2 = 0;
  (void)std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1)
  int exponent = e2 - 1;     // a = 1.m * 2^exponent, exponent in [-6, 8]
  int mant = static_cast<int>(std::nearbyint((std::ldexp(a, -exponent) - 1.0) * 8.0));
  if (mant == 8) {
    mant = 0;
    ++exponent;
  }
  const int code = ((exponent + 7) << 3) | mant;
  return static_cast<uint8_t>(sign | (code > 0x7E ? 0x7E : code));
}

float e2m1_to_f32(uint8_t code) {
  static constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float m = kMagnitude[code & 0x7u];
  return (code & 0x8u) ? -m : m;
}

size_t dtype_size(int32_t dtype) { return sdk::dtype_size(dtype); }

std::string dtype_name(int32_t dtype) {
  const char* name = sdk::dtype_name(dtype);
  return name ? name : "dtype#" + std::to_string(dtype);
}

bool is_float_dtype(int32_t dtype) {
  return dtype == SEATRT_DTYPE_F32 || dtype == SEATRT_DTYPE_BF16 || dtype == SEATRT_DTYPE_F16 ||
         dtype == SEATRT_DTYPE_F8_E4M3;
}

void load_f32(int32_t dtype, const void* src, float* dst, int64_t n) {
  switch (dtype) {
    case SEATRT_DTYPE_F32: {
      const float* s = static_cast<const float*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = s[i];
      return;
    }
    case SEATRT_DTYPE_BF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    }
    case SEATRT_DTYPE_F16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i]);
      return;
    }
    case SEATRT_DTYPE_F8_E4M3: {
      const uint8_t* s = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = e4m3_to_f32(s[i]);
      return;
    }
    default:
      return;  // callers validate dtypes first
  }
}

void store_f32(int32_t dtype, const float* src, void* dst, int64_t n) {
  switch (dtype) {
    case SEATRT_DTYPE_F32: {
      float* d = static_cast<float*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = src[i];
      return;
    }
    case SEATRT_DTYPE_BF16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
      return;
    }
    case SEATRT_DTYPE_F16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_f16(src[i]);
      return;
    }
    case SEATRT_DTYPE_F8_E4M3: {
      uint8_t* d = static_cast<uint8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_e4m3(src[i]);
      return;
    }
    default:
      return;
  }
}

}  // namespace seatrt::cpu
