// What the fused norms share with rms_norm (op_norm.cpp): the inverse RMS of
// one row and its scaling by a gain, in rms_norm's exact arithmetic, so a
// fused operation equals the unfused sequence bit for bit on F32 data; and
// the checks their arguments have in common.
#pragma once

#include <cmath>
#include <vector>

#include "tensor_view.hpp"

namespace seatrt::cpu {

// (mean(v^2) + eps)^-1/2 with the sum in double, sequential: the same
// arithmetic as rms_norm.
inline float inverse_rms(const std::vector<float>& v, float eps) {
  double sum = 0.0;
  for (float e : v) sum += static_cast<double>(e) * static_cast<double>(e);
  const auto n = static_cast<double>(v.size());
  const float mean = v.empty() ? 0.0f : static_cast<float>(sum / n);
  return 1.0f / std::sqrt(mean + eps);
}

// v <- v * inv * gain (gain empty = none), in rms_norm's order of operations.
inline void scale_row(std::vector<float>& v, float inv, const std::vector<float>& gain) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = gain.empty() ? v[i] * inv : v[i] * inv * gain[i];
}

// v <- rmsnorm(v) * gain, exactly as rms_norm computes one row.
inline void norm_row(std::vector<float>& v, float eps, const std::vector<float>& gain) {
  scale_row(v, inverse_rms(v, eps), gain);
}

// An optional [n] gain as floats (empty when weight is NULL).  Throws naming
// `op` and `name` when it is not an activation-dtype vector of n entries.
inline std::vector<float> load_gain(const seatrt_tensor* weight, const char* op, const char* name, int64_t n) {
  std::vector<float> gain;
  if (!weight) return gain;
  const seatrt_tensor& w = need_tensor(weight, op, name);
  need_ndim(w, op, name, 1);
  need_dtype(w, op, name, kActivationDtypes);
  need_dim(w, op, name, 0, n);
  gain.resize(static_cast<size_t>(n));
  Rows(w).load(0, gain.data());
  return gain;
}

inline void need_eps(float eps, const char* op) {
  if (!(eps >= 0.0f) || !std::isfinite(eps)) invalid(op, "eps must be finite and >= 0");
}

// Two descriptors over the same first element (the aliasing the operations'
// contracts name; views that interleave are not detected).
inline bool same_memory(const seatrt_tensor& a, const seatrt_tensor& b) {
  return a.data != nullptr && a.data == b.data;
}

}  // namespace seatrt::cpu
