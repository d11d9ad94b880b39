// The fused norms: add_rms_norm (ABI 1.1: residual += rmsnorm(x) * w,
// scaled, then optionally the norm of the new residual), rms_norm_rope (1.1:
// per-head norm then rotary embedding) and add_rms_norm_pair (1.4: the
// branch of add_rms_norm is the norm of two normed branches' sum).  Each
// step is computed exactly as the unfused op computes it (op_norm.cpp,
// op_elementwise.cpp, op_rope.cpp, through row_norm.hpp and rotary.hpp), so
// the fused result equals the composition bit for bit on F32 data; what is
// saved is the passes over memory and the calls.
#include <cmath>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "rotary.hpp"
#include "row_norm.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

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

void add_rms_norm_pair(Context& ctx, const seatrt_add_rms_norm_pair_args* args_in) {
  constexpr const char* kOp = "add_rms_norm_pair";
  const auto& args = need_args(args_in, kOp);
  const seatrt_tensor& a = need_tensor(args.a, kOp, "a");
  const seatrt_tensor& b = need_tensor(args.b, kOp, "b");
  const seatrt_tensor& residual = need_tensor(args.residual, kOp, "residual");
  need_dtype(a, kOp, "a", kActivationDtypes);
  // One dtype for a, b, residual and out (the contract), one shape.
  const auto need_like_a = [&](const seatrt_tensor& t, const char* name) {
    need_same_shape(a, "a", t, name, kOp);
    if (t.dtype != a.dtype)
      invalid(kOp, std::string(name) + " has dtype " + dtype_name(t.dtype) + " but a has " + dtype_name(a.dtype));
  };
  need_like_a(b, "b");
  need_like_a(residual, "residual");
  if (same_memory(residual, a)) invalid(kOp, "residual must not alias a");
  if (same_memory(residual, b)) invalid(kOp, "residual must not alias b");
  const seatrt_tensor* out = nullptr;
  if (args.out) {
    out = &need_tensor(args.out, kOp, "out");
    need_like_a(*out, "out");
    if (same_memory(*out, residual)) invalid(kOp, "out must not alias residual");
  }
  need_eps(args.eps, kOp);
  if (!std::isfinite(args.residual_scale)) invalid(kOp, "residual_scale must be finite");
  const int64_t n = a.shape[a.ndim - 1];
  const std::vector<float> a_gain = load_gain(args.a_weight, kOp, "a_weight", n);
  const std::vector<float> b_gain = load_gain(args.b_weight, kOp, "b_weight", n);
  const std::vector<float> sum_gain = load_gain(args.sum_weight, kOp, "sum_weight", n);
  const std::vector<float> out_gain = out ? load_gain(args.out_weight, kOp, "out_weight", n) : std::vector<float>{};
  const Rows a_rows(a), b_rows(b), res_rows(residual);
  const Rows out_rows = out ? Rows(*out) : Rows();
  const float eps = args.eps, scale = args.residual_scale;
  parallel_chunks(ctx.pool, a_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> sum(static_cast<size_t>(n)), other(static_cast<size_t>(n)), res(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      // a and b are read completely before out (which may alias either) is
      // written.  s = norm(a) + norm(b) is what rms_norm into an F32 s, then
      // add_rms_norm(b, s, scale 1) computes: the "* 1" is exact.
      a_rows.load(r, sum.data());
      norm_row(sum, eps, a_gain);
      b_rows.load(r, other.data());
      norm_row(other, eps, b_gain);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] = sum[i] + other[i];
      // From here exactly add_rms_norm(s, sum_weight, residual, scale, ...).
      norm_row(sum, eps, sum_gain);
      res_rows.load(r, res.data());
      for (size_t i = 0; i < res.size(); ++i) res[i] = (res[i] + sum[i]) * scale;
      res_rows.store(r, res.data());
      if (!out) continue;
      res_rows.load(r, res.data());  // as stored (rounded to its dtype)
      norm_row(res, eps, out_gain);
      out_rows.store(r, res.data());
    }
  });
}

}  // namespace seatrt::cpu
