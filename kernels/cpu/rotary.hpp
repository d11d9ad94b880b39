// What the rope, rms_norm_rope and qkv_norm_rope_store ops share: the checks
// of positions and inv_freq (and of rope's x and out), and the rotation of
// one (token, head) row, so the fused ops rotate exactly as rope does.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tensor_view.hpp"

namespace seatrt::cpu {

struct RotaryInputs {
  int64_t dim = 0;              // head dim D (even)
  int64_t heads = 0;            // rows per token
  std::vector<int64_t> pos;     // [T]
  std::vector<float> freq;      // [D/2]
};

// positions I32 [tokens] and inv_freq F32 [dim/2] for rows of head dim
// `dim` (which must be even), read into a RotaryInputs with `heads` rows per
// token.  Throws naming `op` and the argument (`what` names the rotated
// tensor in the odd-dim message).
inline RotaryInputs read_rotary(const char* op, const char* what, int64_t tokens, int64_t heads, int64_t dim,
                                const seatrt_tensor& positions, const seatrt_tensor& inv_freq) {
  need_ndim(positions, op, "positions", 1);
  need_dtype(positions, op, "positions", {SEATRT_DTYPE_I32});
  need_dim(positions, op, "positions", 0, tokens);
  if (dim % 2 != 0) invalid(op, std::string(what) + "'s head dim " + std::to_string(dim) + " is odd");
  const int64_t half = dim / 2;
  need_ndim(inv_freq, op, "inv_freq", 1);
  need_dtype(inv_freq, op, "inv_freq", {SEATRT_DTYPE_F32});
  need_dim(inv_freq, op, "inv_freq", 0, half);
  RotaryInputs in;
  in.dim = dim;
  in.heads = heads;
  in.pos = read_indices(positions, op, "positions");
  in.freq.resize(static_cast<size_t>(half));
  Rows(inv_freq).load(0, in.freq.data());
  return in;
}

// x and out [T, heads, D] of activation dtypes and one shape, D even;
// positions I32 [T]; inv_freq F32 [D/2].  Throws naming `op` and the argument.
inline RotaryInputs check_rotary(const char* op, const seatrt_tensor& x, const seatrt_tensor& positions,
                                 const seatrt_tensor& inv_freq, const seatrt_tensor& out) {
  need_ndim(x, op, "x", 3);
  need_dtype(x, op, "x", kActivationDtypes);
  need_dtype(out, op, "out", kActivationDtypes);
  need_same_shape(x, "x", out, "out", op);
  return read_rotary(op, "x", x.shape[0], x.shape[1], x.shape[2], positions, inv_freq);
}

// NeoX half-split rotation of pairs (i, i + D/2) of one row in place: angle
// = position * inv_freq[i] in fp32 (as the reference computes it), cos/sin
// in double; a zero frequency leaves its pair untouched (partial RoPE).
inline void rotate_row(std::vector<float>& v, float position, const std::vector<float>& freq) {
  const size_t half = freq.size();
  for (size_t i = 0; i < half; ++i) {
    const float f = freq[i];
    if (f == 0.0f) continue;
    const float theta = position * f;
    const float c = static_cast<float>(std::cos(static_cast<double>(theta)));
    const float s = static_cast<float>(std::sin(static_cast<double>(theta)));
    const float a = v[i];
    const float b = v[i + half];
    v[i] = a * c - b * s;
    v[i + half] = b * c + a * s;
  }
}

}  // namespace seatrt::cpu
