// glu: out = act(gate) * up, elementwise; gate and up may be strided views
// (e.g. the two halves of one fused [M, 2I] projection).
#include <vector>

#include "activation.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

bool is_known_activation(int32_t activation) {
  return activation == SEATRT_ACT_GELU_TANH || activation == SEATRT_ACT_SILU ||
         activation == SEATRT_ACT_GELU_ERF;
}

void glu(Context& ctx, const seatrt_glu_args& args) {
  constexpr const char* kOp = "glu";
  if (!is_known_activation(args.activation)) {
    invalid(kOp, "unknown activation " + std::to_string(args.activation));
  }
  const seatrt_tensor& gate = need_tensor(args.gate, kOp, "gate");
  const seatrt_tensor& up = need_tensor(args.up, kOp, "up");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_dtype(gate, kOp, "gate", kActivationDtypes);
  need_dtype(up, kOp, "up", kActivationDtypes);
  need_dtype(out, kOp, "out", kActivationDtypes);
  need_same_shape(gate, "gate", up, "up", kOp);
  need_same_shape(gate, "gate", out, "out", kOp);
  const Rows gate_rows(gate);
  const Rows up_rows(up);
  const Rows out_rows(out);
  const int64_t n = gate_rows.cols();
  parallel_chunks(ctx.pool, gate_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> g(static_cast<size_t>(n)), u(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      gate_rows.load(r, g.data());
      up_rows.load(r, u.data());
      apply_glu(args.activation, g.data(), u.data(), g.data(), n);
      out_rows.store(r, g.data());
    }
  });
}

}  // namespace seatrt::cpu
