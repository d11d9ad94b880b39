// Scalar number formats the CPU provider reads and writes, converted to and
// from fp32.  Every conversion is exact where the target can hold the value
// and rounds to nearest-even otherwise, so results do not depend on the
// compiler's floating-point settings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "seatrt/tensor.h"

namespace seatrt::cpu {

// bf16 = the top 16 bits of an fp32.
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);  // round to nearest even; NaN stays NaN

// IEEE binary16.
float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);  // round to nearest even; overflow -> inf

// OCP E4M3FN: bias 7, no infinities, 0x7F/0xFF are NaN, max 448.
float e4m3_to_f32(uint8_t bits);
// Round to nearest even, saturating at +-448 (a KV cache must not turn a
// large value into NaN); NaN -> 0x7F with the sign kept.
uint8_t f32_to_e4m3(float value);

// FP4 E2M1 code (low 4 bits used): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives.
float e2m1_to_f32(uint8_t code);

// Size in bytes of one element; 0 for INVALID/unknown.
size_t dtype_size(int32_t dtype);
// "F32", "BF16", ... for messages.
std::string dtype_name(int32_t dtype);
// True for dtypes the provider converts to fp32 for math (F32, BF16, F16, F8_E4M3).
bool is_float_dtype(int32_t dtype);

// Bulk conversions of n contiguous elements (dtype must be a float dtype).
void load_f32(int32_t dtype, const void* src, float* dst, int64_t n);
void store_f32(int32_t dtype, const float* src, void* dst, int64_t n);

}  // namespace seatrt::cpu
