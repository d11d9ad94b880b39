// rope: NeoX half-split rotation of pairs (i, i + D/2) over the whole head
// dim, angle = position * inv_freq[i] in fp32; a zero frequency leaves its
// pair untouched (partial / proportional RoPE).
#include <cmath>
#include <vector>

#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

void rope(Context& ctx, const seatrt_rope_args* args_in) {
  constexpr const char* kOp = "rope";
  const auto& args = need_args(args_in, kOp);
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& positions = need_tensor(args.positions, kOp, "positions");
  const seatrt_tensor& inv_freq = need_tensor(args.inv_freq, kOp, "inv_freq");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_ndim(x, kOp, "x", 3);
  need_dtype(x, kOp, "x", kActivationDtypes);
  need_dtype(out, kOp, "out", kActivationDtypes);
  need_same_shape(x, "x", out, "out", kOp);
  need_ndim(positions, kOp, "positions", 1);
  need_dtype(positions, kOp, "positions", {SEATRT_DTYPE_I32});
  need_dim(positions, kOp, "positions", 0, x.shape[0]);
  const int64_t dim = x.shape[2];
  if (dim % 2 != 0) invalid(kOp, "head dim " + std::to_string(dim) + " is odd");
  const int64_t half = dim / 2;
  need_ndim(inv_freq, kOp, "inv_freq", 1);
  need_dtype(inv_freq, kOp, "inv_freq", {SEATRT_DTYPE_F32});
  need_dim(inv_freq, kOp, "inv_freq", 0, half);
  const std::vector<int64_t> pos = read_indices(positions, kOp, "positions");
  std::vector<float> freq(static_cast<size_t>(half));
  Rows(inv_freq).load(0, freq.data());

  const Rows x_rows(x);  // rows = (token, head)
  const Rows out_rows(out);
  const int64_t heads = x.shape[1];
  parallel_chunks(ctx.pool, x_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> v(static_cast<size_t>(dim));
    for (int64_t r = begin; r < end; ++r) {
      const float p = static_cast<float>(pos[static_cast<size_t>(r / heads)]);
      x_rows.load(r, v.data());
      for (int64_t i = 0; i < half; ++i) {
        const float f = freq[static_cast<size_t>(i)];
        if (f == 0.0f) continue;
        const float theta = p * f;  // fp32 product, as the reference computes it
        const float c = static_cast<float>(std::cos(static_cast<double>(theta)));
        const float s = static_cast<float>(std::sin(static_cast<double>(theta)));
        const float a = v[static_cast<size_t>(i)];
        const float b = v[static_cast<size_t>(i + half)];
        v[static_cast<size_t>(i)] = a * c - b * s;
        v[static_cast<size_t>(i + half)] = b * c + a * s;
      }
      out_rows.store(r, v.data());
    }
  });
}

}  // namespace seatrt::cpu
