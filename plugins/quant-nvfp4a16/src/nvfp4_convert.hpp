// NVFP4 arithmetic on host memory: E2M1 and E4M3 decoding and the
// dequantization w = fp4 * (weight_scale / weight_global_scale).
#pragma once

#include <cstddef>
#include <cstdint>

namespace seatrt::nvfp4 {

// A quantized [out, in] weight as compressed-tensors stores it.
struct PackedWeight {
  const uint8_t* packed;  // [out, in/2], element 2i in the low nibble of byte i
  const uint8_t* scales;  // E4M3 [out, in/16]
  float global_scale;     // the divisor
  int64_t out_features;
  int64_t in_features;
};

float e2m1_to_f32(uint8_t code);  // low 4 bits: s e1 e0 m
float e4m3_to_f32(uint8_t bits);  // OCP E4M3FN
float bf16_to_f32(uint16_t bits);
float f16_to_f32(uint16_t bits);

// Writes the fp32 matrix [out, in].  The group step s/gs is computed in
// fp32 first, then multiplied by the E2M1 value (as compressed-tensors does).
void dequantize(const PackedWeight& w, float* out);

// Converts a dense BF16/F16/F32 array to fp32; false for another dtype.
bool dense_to_f32(int32_t seatrt_dtype, const void* data, std::size_t count, float* out);

}  // namespace seatrt::nvfp4
