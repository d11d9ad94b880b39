#include "seatrt/model/dtype.hpp"
#include "seatrt/cpp/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace seatrt::model {

std::optional<SafetensorsDtype> safetensors_dtype(std::string_view name) {
  struct Entry {
    std::string_view name;
    SafetensorsDtype type;
  };
  static constexpr Entry kTable[] = {
      {"F64", {SEATRT_DTYPE_F64, 8}},       {"F32", {SEATRT_DTYPE_F32, 4}},
      {"F16", {SEATRT_DTYPE_F16, 2}},       {"BF16", {SEATRT_DTYPE_BF16, 2}},
      {"F8_E4M3", {SEATRT_DTYPE_F8_E4M3, 1}}, {"F8_E5M2", {SEATRT_DTYPE_F8_E5M2, 1}},
      {"U8", {SEATRT_DTYPE_U8, 1}},         {"I8", {SEATRT_DTYPE_I8, 1}},
      {"I32", {SEATRT_DTYPE_I32, 4}},       {"I64", {SEATRT_DTYPE_I64, 8}},
      {"U32", {SEATRT_DTYPE_U32, 4}},       {"BOOL", {SEATRT_DTYPE_BOOL, 1}},
      // Valid safetensors types seatrt has no enum value for.
      {"I16", {SEATRT_DTYPE_INVALID, 2}},   {"U16", {SEATRT_DTYPE_INVALID, 2}},
      {"U64", {SEATRT_DTYPE_INVALID, 8}},
  };
  for (const auto& e : kTable)
    if (e.name == name) return e.type;
  return std::nullopt;
}

const char* dtype_name(int32_t dtype) {
  const char* name = sdk::dtype_name(dtype);
  return name ? name : "INVALID";
}

std::size_t dtype_size(int32_t dtype) { return sdk::dtype_size(dtype); }

float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

float f16_to_f32(uint16_t bits) {
  const uint32_t sign = (bits >> 15) & 1u;
  const uint32_t exp = (bits >> 10) & 0x1Fu;
  const uint32_t mant = bits & 0x3FFu;
  float magnitude;
  if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    magnitude = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  return sign ? -magnitude : magnitude;
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
    magnitude = std::ldexp(static_cast<float>(8 + mant), exp - 10);  // (1+mant/8) * 2^(exp-7)
  }
  return negative ? -magnitude : magnitude;
}

uint16_t f32_to_bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

void convert_to_f32(int32_t src_dtype, const void* src, std::size_t count, float* out) {
  const auto* bytes = static_cast<const unsigned char*>(src);
  switch (src_dtype) {
    case SEATRT_DTYPE_F32:
      std::memcpy(out, src, count * sizeof(float));
      return;
    case SEATRT_DTYPE_BF16:
    case SEATRT_DTYPE_F16:
      for (std::size_t i = 0; i < count; ++i) {
        uint16_t v;
        std::memcpy(&v, bytes + 2 * i, 2);
        out[i] = src_dtype == SEATRT_DTYPE_BF16 ? bf16_to_f32(v) : f16_to_f32(v);
      }
      return;
    case SEATRT_DTYPE_F8_E4M3:
      for (std::size_t i = 0; i < count; ++i) out[i] = e4m3_to_f32(bytes[i]);
      return;
    case SEATRT_DTYPE_F64:
      for (std::size_t i = 0; i < count; ++i) {
        double v;
        std::memcpy(&v, bytes + 8 * i, 8);
        out[i] = static_cast<float>(v);
      }
      return;
    default:
      throw std::invalid_argument(std::string("no conversion from ") + dtype_name(src_dtype) + " to F32");
  }
}

}  // namespace seatrt::model
