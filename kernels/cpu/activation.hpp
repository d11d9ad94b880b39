// The gated-MLP activations (seatrt_activation), in fp32.
#pragma once

#include <cmath>
#include <cstdint>

namespace seatrt::cpu {

inline float gelu_tanh(float z) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * z * (1.0f + std::tanh(kSqrt2OverPi * (z + 0.044715f * z * z * z)));
}
inline float gelu_erf(float z) { return 0.5f * z * (1.0f + std::erf(z * 0.7071067811865476f)); }
inline float silu(float z) { return z / (1.0f + std::exp(-z)); }

// out[i] = act(gate[i]) * up[i]; `activation` already validated.
inline void apply_glu(int32_t activation, const float* gate, const float* up, float* out,
                      int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float a = activation == 0 ? gelu_tanh(g) : activation == 1 ? silu(g) : gelu_erf(g);
    out[i] = a * up[i];
  }
}

bool is_known_activation(int32_t activation);

}  // namespace seatrt::cpu
