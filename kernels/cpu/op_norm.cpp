// rms_norm: out = x * (mean(x^2) + eps)^-1/2 * (weight + weight_offset)
// over the last axis, weightless when weight is NULL; fp32 inside, one
// rounding on store.
#include <cmath>
#include <vector>

#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

void rms_norm(Context& ctx, const seatrt_rms_norm_args& args) {
  constexpr const char* kOp = "rms_norm";
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_dtype(x, kOp, "x", kActivationDtypes);
  need_dtype(out, kOp, "out", kActivationDtypes);
  need_same_shape(x, "x", out, "out", kOp);
  if (!(args.eps >= 0.0f) || !std::isfinite(args.eps)) invalid(kOp, "eps must be finite and >= 0");
  if (!std::isfinite(args.weight_offset)) invalid(kOp, "weight_offset is not finite");
  const int64_t n = x.shape[x.ndim - 1];
  std::vector<float> gain;
  if (args.weight) {
    const seatrt_tensor& w = need_tensor(args.weight, kOp, "weight");
    need_ndim(w, kOp, "weight", 1);
    need_dtype(w, kOp, "weight", kActivationDtypes);
    need_dim(w, kOp, "weight", 0, n);
    gain.resize(static_cast<size_t>(n));
    Rows(w).load(0, gain.data());
    // The offset joins the gain in fp32 before it scales the row, as a
    // zero-centred checkpoint's (1 + w) is computed.
    for (float& g : gain) g += args.weight_offset;
  }
  const Rows x_rows(x);
  const Rows out_rows(out);
  const float eps = args.eps;
  parallel_chunks(ctx.pool, x_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      x_rows.load(r, row.data());
      // Sum of squares in double, sequential: deterministic and at least as
      // accurate as an fp32 tree reduction.
      double sum = 0.0;
      for (float v : row) sum += static_cast<double>(v) * static_cast<double>(v);
      const float mean = n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.0f;
      const float inv = 1.0f / std::sqrt(mean + eps);
      for (size_t i = 0; i < row.size(); ++i) {
        row[i] = gain.empty() ? row[i] * inv : row[i] * inv * gain[i];
      }
      out_rows.store(r, row.data());
    }
  });
}

}  // namespace seatrt::cpu
