// rope's argument checks and the rotation of one (token, head) row: which
// position each frequency pair takes (one per token, or one per section for
// multi-section RoPE) and the NeoX half-split rotation itself.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tensor_view.hpp"

namespace seatrt::cpu {

struct RotaryInputs {
  int64_t dim = 0;                   // head dim D (even)
  int64_t heads = 0;                 // rows per token
  int64_t sections = 1;              // positions per token
  std::vector<int64_t> pos;          // [T, sections]
  std::vector<int32_t> pair_section; // [D/2]: the section whose position pair i takes
  std::vector<float> freq;           // [D/2]
};

// Which section each of the `half` frequency pairs belongs to.  One section
// (num_sections 0 or 1) covers every pair; otherwise the sections' pair
// counts must be >= 0 and sum to half.
inline std::vector<int32_t> section_of_pairs(const char* op, int32_t num_sections, const int32_t* sections,
                                             int64_t half) {
  if (num_sections <= 1) {
    if (num_sections < 0) invalid(op, "num_sections " + std::to_string(num_sections) + " is negative");
    return std::vector<int32_t>(static_cast<size_t>(half), 0);
  }
  if (num_sections > SEATRT_ROPE_MAX_SECTIONS) {
    invalid(op, "num_sections " + std::to_string(num_sections) + " is above " + std::to_string(SEATRT_ROPE_MAX_SECTIONS));
  }
  std::vector<int32_t> out;
  for (int32_t s = 0; s < num_sections; ++s) {
    if (sections[s] < 0) invalid(op, "sections[" + std::to_string(s) + "] is negative");
    out.insert(out.end(), static_cast<size_t>(sections[s]), s);
  }
  if (static_cast<int64_t>(out.size()) != half) {
    invalid(op, "the sections' pair counts sum to " + std::to_string(out.size()) + ", not D/2 = " + std::to_string(half));
  }
  return out;
}

// x and out [T, heads, D] of activation dtypes and one shape, D even;
// positions I32 [T] (one section) or [T, num_sections]; inv_freq F32 [D/2].
// Throws naming `op` and the argument.
inline RotaryInputs check_rotary(const char* op, const seatrt_tensor& x, const seatrt_tensor& positions,
                                 const seatrt_tensor& inv_freq, const seatrt_tensor& out, int32_t num_sections,
                                 const int32_t* sections) {
  need_ndim(x, op, "x", 3);
  need_dtype(x, op, "x", kActivationDtypes);
  need_dtype(out, op, "out", kActivationDtypes);
  need_same_shape(x, "x", out, "out", op);
  const int64_t tokens = x.shape[0];
  const int64_t dim = x.shape[2];
  if (dim % 2 != 0) invalid(op, "x's head dim " + std::to_string(dim) + " is odd");
  const int64_t half = dim / 2;
  RotaryInputs in;
  in.dim = dim;
  in.heads = x.shape[1];
  in.pair_section = section_of_pairs(op, num_sections, sections, half);
  in.sections = num_sections > 1 ? num_sections : 1;
  need_dtype(positions, op, "positions", {SEATRT_DTYPE_I32});
  need_ndim(positions, op, "positions", in.sections > 1 ? 2 : 1);
  need_dim(positions, op, "positions", 0, tokens);
  if (in.sections > 1) need_dim(positions, op, "positions", 1, in.sections);
  need_ndim(inv_freq, op, "inv_freq", 1);
  need_dtype(inv_freq, op, "inv_freq", {SEATRT_DTYPE_F32});
  need_dim(inv_freq, op, "inv_freq", 0, half);
  in.pos = read_indices(positions, op, "positions");
  in.freq.resize(static_cast<size_t>(half));
  Rows(inv_freq).load(0, in.freq.data());
  return in;
}

// NeoX half-split rotation of pairs (i, i + D/2) of the row of `token` in
// place: angle = position * inv_freq[i] in fp32 (as the reference computes
// it), cos/sin in double; a zero frequency leaves its pair untouched
// (partial RoPE).
inline void rotate_row(std::vector<float>& v, const RotaryInputs& in, int64_t token) {
  const size_t half = in.freq.size();
  const int64_t* pos = in.pos.data() + token * in.sections;
  for (size_t i = 0; i < half; ++i) {
    const float f = in.freq[i];
    if (f == 0.0f) continue;
    const float theta = static_cast<float>(pos[in.pair_section[i]]) * f;
    const float c = static_cast<float>(std::cos(static_cast<double>(theta)));
    const float s = static_cast<float>(std::sin(static_cast<double>(theta)));
    const float a = v[i];
    const float b = v[i + half];
    v[i] = a * c - b * s;
    v[i + half] = b * c + a * s;
  }
}

}  // namespace seatrt::cpu
