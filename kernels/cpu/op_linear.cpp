// linear: out [..., N] = x [..., K] * W^T (+ bias [N]) for DENSE
// (BF16/F16/F32) and NVFP4 weights.  Work is split over output features: each W row is decoded once
// and applied to every x row, accumulating in fp32.
#include <vector>

#include "dtype.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"
#include "weight.hpp"

namespace seatrt::cpu {

void linear(Context& ctx, const seatrt_linear_args& args) {
  constexpr const char* kOp = "linear";
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_dtype(x, kOp, "x", kActivationDtypes);
  need_dtype(out, kOp, "out", kActivationDtypes);
  validate_weight(args.weight, kOp, "weight");
  const seatrt_linear_weight& w = *args.weight;
  const Rows x_rows(x);
  const Rows out_rows(out);
  if (x_rows.cols() != w.in_features) {
    invalid(kOp, "x has shape " + shape_string(x) + " but the weight's in_features is " +
                     std::to_string(w.in_features));
  }
  bool same_lead = x.ndim == out.ndim && out_rows.cols() == w.out_features;
  for (int32_t i = 0; same_lead && i + 1 < x.ndim; ++i) same_lead = x.shape[i] == out.shape[i];
  if (!same_lead) {
    invalid(kOp, "out has shape " + shape_string(out) + ", expected x's leading axes and " +
                     std::to_string(w.out_features) + " features");
  }
  std::vector<float> bias;
  if (args.bias) {
    const seatrt_tensor& b = need_tensor(args.bias, kOp, "bias");
    need_ndim(b, kOp, "bias", 1);
    need_dtype(b, kOp, "bias", kActivationDtypes);
    need_dim(b, kOp, "bias", 0, w.out_features);
    bias.resize(static_cast<size_t>(w.out_features));
    Rows(b).load(0, bias.data());
  }
  const int64_t m_rows = x_rows.rows();
  const int64_t k = w.in_features;
  std::vector<float> xf(static_cast<size_t>(m_rows * k));
  parallel_chunks(ctx.pool, m_rows, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) x_rows.load(m, xf.data() + m * k);
  });
  const size_t out_esize = dtype_size(out.dtype);
  parallel_chunks(ctx.pool, w.out_features, [&](int64_t n_begin, int64_t n_end) {
    const int64_t width = n_end - n_begin;
    std::vector<float> wrow(static_cast<size_t>(k));
    std::vector<float> y(static_cast<size_t>(m_rows * width));
    linear_block(w, xf.data(), m_rows, n_begin, n_end, y.data(), width, wrow.data());
    if (!bias.empty()) {
      for (int64_t m = 0; m < m_rows; ++m) {
        for (int64_t n = 0; n < width; ++n) y[static_cast<size_t>(m * width + n)] += bias[static_cast<size_t>(n_begin + n)];
      }
    }
    for (int64_t m = 0; m < m_rows; ++m) {
      store_f32(out.dtype, y.data() + m * width,
                out_rows.row_ptr(m) + n_begin * static_cast<int64_t>(out_esize), width);
    }
  });
}

}  // namespace seatrt::cpu
