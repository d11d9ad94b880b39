// The ABI 1.1 fused norms: add_rms_norm (residual += rmsnorm(x) * w, scaled,
// then optionally the norm of the new residual) and rms_norm_rope (per-head
// norm then rotary embedding).  Each step is computed exactly as the unfused
// op computes it (op_norm.cpp, op_elementwise.cpp, op_rope.cpp), so the
// fused result equals the composition bit for bit on F32 data; what is saved
// is the passes over memory and the calls.
#include <cmath>
#include <vector>

#include "ops.hpp"
#include "parallel.hpp"
#include "rotary.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

// (mean(v^2) + eps)^-1/2 with the sum in double, sequential: the same
// arithmetic as rms_norm.
float inverse_rms(const std::vector<float>& v, float eps) {
  double sum = 0.0;
  for (float e : v) sum += static_cast<double>(e) * static_cast<double>(e);
  const auto n = static_cast<double>(v.size());
  const float mean = v.empty() ? 0.0f : static_cast<float>(sum / n);
  return 1.0f / std::sqrt(mean + eps);
}

// v <- v * inv * gain (gain empty = none), in rms_norm's order of operations.
void scale_row(std::vector<float>& v, float inv, const std::vector<float>& gain) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = gain.empty() ? v[i] * inv : v[i] * inv * gain[i];
}

// An optional [n] gain as floats (empty when weight is NULL).
std::vector<float> load_gain(const seatrt_tensor* weight, const char* op, const char* name, int64_t n) {
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

void need_eps(float eps, const char* op) {
  if (!(eps >= 0.0f) || !std::isfinite(eps)) invalid(op, "eps must be finite and >= 0");
}

bool same_memory(const seatrt_tensor& a, const seatrt_tensor& b) { return a.data != nullptr && a.data == b.data; }

}  // namespace

void add_rms_norm(Context& ctx, const seatrt_add_rms_norm_args* args_in) {
  constexpr const char* kOp = "add_rms_norm";
  const auto& args = need_args(args_in, kOp);
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& residual = need_tensor(args.residual, kOp, "residual");
  need_dtype(x, kOp, "x", kActivationDtypes);
  need_dtype(residual, kOp, "residual", kActivationDtypes);
  need_same_shape(x, "x", residual, "residual", kOp);
  if (same_memory(x, residual)) invalid(kOp, "residual must not alias x");
  const seatrt_tensor* out = nullptr;
  if (args.out) {
    out = &need_tensor(args.out, kOp, "out");
    need_dtype(*out, kOp, "out", kActivationDtypes);
    need_same_shape(x, "x", *out, "out", kOp);
    if (same_memory(*out, residual)) invalid(kOp, "out must not alias residual");
  }
  need_eps(args.eps, kOp);
  if (!std::isfinite(args.residual_scale)) invalid(kOp, "residual_scale must be finite");
  const int64_t n = x.shape[x.ndim - 1];
  const std::vector<float> x_gain = load_gain(args.x_weight, kOp, "x_weight", n);
  const std::vector<float> out_gain = out ? load_gain(args.out_weight, kOp, "out_weight", n) : std::vector<float>{};
  const Rows x_rows(x);
  const Rows res_rows(residual);
  const Rows out_rows = out ? Rows(*out) : Rows();
  const float eps = args.eps, scale = args.residual_scale;
  parallel_chunks(ctx.pool, x_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> branch(static_cast<size_t>(n)), res(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      x_rows.load(r, branch.data());
      scale_row(branch, inverse_rms(branch, eps), x_gain);
      res_rows.load(r, res.data());
      for (size_t i = 0; i < res.size(); ++i) res[i] = (res[i] + branch[i]) * scale;
      res_rows.store(r, res.data());
      if (!out) continue;
      // The second norm reads the residual as stored (rounded to its dtype),
      // as a following rms_norm would.
      res_rows.load(r, res.data());
      scale_row(res, inverse_rms(res, eps), out_gain);
      out_rows.store(r, res.data());
    }
  });
}

void rms_norm_rope(Context& ctx, const seatrt_rms_norm_rope_args* args_in) {
  constexpr const char* kOp = "rms_norm_rope";
  const auto& args = need_args(args_in, kOp);
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& positions = need_tensor(args.positions, kOp, "positions");
  const seatrt_tensor& inv_freq = need_tensor(args.inv_freq, kOp, "inv_freq");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_eps(args.eps, kOp);
  const RotaryInputs in = check_rotary(kOp, x, positions, inv_freq, out);
  const std::vector<float> gain = load_gain(args.weight, kOp, "weight", in.dim);

  const Rows x_rows(x);  // rows = (token, head)
  const Rows out_rows(out);
  const float eps = args.eps;
  parallel_chunks(ctx.pool, x_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> v(static_cast<size_t>(in.dim));
    for (int64_t r = begin; r < end; ++r) {
      x_rows.load(r, v.data());
      scale_row(v, inverse_rms(v, eps), gain);
      rotate_row(v, static_cast<float>(in.pos[static_cast<size_t>(r / in.heads)]), in.freq);  // exactly as rope
      out_rows.store(r, v.data());
    }
  });
}

}  // namespace seatrt::cpu
