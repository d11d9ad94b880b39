// elementwise: add, mul (b broadcast over leading dims), scale, softcap,
// copy with dtype conversion, sigmoid, and mul_rows (one factor per row of
// a).  Math in fp32; one rounding on store.
#include <cmath>
#include <vector>

#include "dtype.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

constexpr const char* kOp = "elementwise";

// b must equal a's trailing axes (leading extents of 1 in b are ignored).
void check_broadcast(const seatrt_tensor& a, const seatrt_tensor& b) {
  int32_t first = 0;
  while (first < b.ndim - 1 && b.shape[first] == 1) ++first;
  const int32_t kept = b.ndim - first;
  bool ok = kept <= a.ndim;
  for (int32_t i = 0; ok && i < kept; ++i) ok = b.shape[first + i] == a.shape[a.ndim - kept + i];
  if (!ok) {
    invalid(kOp, "b has shape " + shape_string(b) + ", which is not the trailing shape of a " +
                     shape_string(a));
  }
}

// mul_rows: b holds one value per row of a, in any shape of that many
// elements ([T] or [T, 1]); read as one flat vector.
std::vector<float> read_row_factors(const seatrt_tensor& a, const seatrt_tensor& b) {
  const Rows a_rows(a);
  if (numel(b) != a_rows.rows()) {
    invalid(kOp, "mul_rows: b has shape " + shape_string(b) + ", expected one value per row of a " + shape_string(a) +
                     " (" + std::to_string(a_rows.rows()) + " values)");
  }
  const Rows b_rows(b);
  std::vector<float> factors(static_cast<size_t>(a_rows.rows()));
  for (int64_t r = 0; r < b_rows.rows(); ++r) b_rows.load(r, factors.data() + r * b_rows.cols());
  return factors;
}

}  // namespace

void elementwise(Context& ctx, const seatrt_elementwise_args& args) {
  const int32_t op = args.op;
  if (op < SEATRT_EW_ADD || op > SEATRT_EW_MUL_ROWS) unsupported(kOp, "unknown op " + std::to_string(op));
  const seatrt_tensor& a = need_tensor(args.a, kOp, "a");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  if (op == SEATRT_EW_COPY) {
    need_dtype(a, kOp, "a", {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F16, SEATRT_DTYPE_F8_E4M3});
    need_dtype(out, kOp, "out", {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F16, SEATRT_DTYPE_F8_E4M3});
  } else {
    need_dtype(a, kOp, "a", kActivationDtypes);
    need_dtype(out, kOp, "out", kActivationDtypes);
  }
  need_same_shape(a, "a", out, "out", kOp);
  const bool binary = op == SEATRT_EW_ADD || op == SEATRT_EW_MUL;
  Rows b_rows;
  if (binary) {
    const seatrt_tensor& b = need_tensor(args.b, kOp, "b");
    need_dtype(b, kOp, "b", kActivationDtypes);
    check_broadcast(a, b);
    b_rows = Rows(b);
  }
  std::vector<float> row_factor;
  if (op == SEATRT_EW_MUL_ROWS) {
    const seatrt_tensor& b = need_tensor(args.b, kOp, "b");
    need_dtype(b, kOp, "b", kActivationDtypes);
    row_factor = read_row_factors(a, b);
  }
  if (op == SEATRT_EW_SOFTCAP && !(args.alpha > 0.0f && std::isfinite(args.alpha))) {
    invalid(kOp, "softcap needs a finite alpha > 0, got " + std::to_string(args.alpha));
  }
  if (op == SEATRT_EW_SCALE && !std::isfinite(args.alpha)) invalid(kOp, "scale alpha is not finite");

  const Rows a_rows(a);
  const Rows out_rows(out);
  const int64_t cols = a_rows.cols();
  const float alpha = args.alpha;
  parallel_chunks(ctx.pool, a_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> x(static_cast<size_t>(cols));
    std::vector<float> y(binary ? static_cast<size_t>(cols) : 0);
    for (int64_t r = begin; r < end; ++r) {
      a_rows.load(r, x.data());
      if (binary) b_rows.load(r % b_rows.rows(), y.data());
      for (int64_t c = 0; c < cols; ++c) {
        float& v = x[static_cast<size_t>(c)];
        switch (op) {
          case SEATRT_EW_ADD: v = v + y[static_cast<size_t>(c)]; break;
          case SEATRT_EW_MUL: v = v * y[static_cast<size_t>(c)]; break;
          case SEATRT_EW_SCALE: v = v * alpha; break;
          case SEATRT_EW_SOFTCAP: v = alpha * std::tanh(v / alpha); break;
          case SEATRT_EW_SIGMOID: v = 1.0f / (1.0f + std::exp(-v)); break;
          case SEATRT_EW_MUL_ROWS: v = v * row_factor[static_cast<size_t>(r)]; break;
          default: break;  // copy
        }
      }
      out_rows.store(r, x.data());
    }
  });
}

}  // namespace seatrt::cpu
