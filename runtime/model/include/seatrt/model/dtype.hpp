// Element types as safetensors names them, their sizes, and exact
// conversions of the narrow float types to fp32 (host side).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "seatrt/tensor.h"

namespace seatrt::model {

struct SafetensorsDtype {
  seatrt_dtype dtype;  // SEATRT_DTYPE_INVALID for a type safetensors has but seatrt does not use
  std::size_t bytes;   // element size
};

// "BF16" -> {BF16, 2}.  nullopt for a name that is not a safetensors dtype.
std::optional<SafetensorsDtype> safetensors_dtype(std::string_view name);

// "BF16", "F8_E4M3", ...; "INVALID" for an unknown value.
const char* dtype_name(int32_t dtype);
// Bytes per element; 0 for INVALID and unknown values.
std::size_t dtype_size(int32_t dtype);

float bf16_to_f32(uint16_t bits);
float f16_to_f32(uint16_t bits);
float e4m3_to_f32(uint8_t bits);  // OCP E4M3FN: no infinities, 0x7F/0xFF are NaN
uint16_t f32_to_bf16(float value);  // round to nearest even

// Converts `count` elements of `src_dtype` at `src` into fp32.  Throws
// std::invalid_argument for a dtype that has no fp32 conversion.
void convert_to_f32(int32_t src_dtype, const void* src, std::size_t count, float* out);

}  // namespace seatrt::model
