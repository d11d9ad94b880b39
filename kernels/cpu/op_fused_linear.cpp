// The ABI 1.2 fused operations: linear_multi (several Linears of one x),
// linear_glu (gate and up Linears, then glu) and rms_norm_multi (one x
// normed with several gains).  On the CPU each is the sequence of single
// operations it replaces, run through the same functions, so the results
// equal that sequence bit for bit; what a device provider saves (reading x
// once, fewer launches) does not apply here.  Every argument is checked
// before any output is written.
#include <cmath>
#include <string>
#include <vector>

#include "ops.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

bool same_memory(const seatrt_tensor& a, const seatrt_tensor& b) { return a.data != nullptr && a.data == b.data; }

int32_t need_count(int32_t count, const char* op) {
  if (count < 1 || count > SEATRT_FUSED_MAX)
    invalid(op, "count " + std::to_string(count) + " is not in 1.." + std::to_string(SEATRT_FUSED_MAX));
  return count;
}

std::string indexed(const char* name, int32_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

// out must be [x's leading axes, features] in an activation dtype.
void need_linear_out(const seatrt_tensor& x, const seatrt_tensor& out, int64_t features, const char* op,
                     const std::string& name) {
  need_dtype(out, op, name.c_str(), kActivationDtypes);
  bool ok = out.ndim == x.ndim && out.shape[out.ndim - 1] == features;
  for (int32_t d = 0; ok && d + 1 < x.ndim; ++d) ok = out.shape[d] == x.shape[d];
  if (!ok)
    invalid(op, name + " has shape " + shape_string(out) + ", expected x's leading axes and " +
                    std::to_string(features) + " features");
}

// A host F32 tensor of x's leading axes and `features` columns over `data`.
seatrt_tensor f32_like_rows(const seatrt_tensor& x, int64_t features, std::vector<float>& data) {
  seatrt_tensor t{};
  t.struct_size = sizeof(t);
  t.dtype = SEATRT_DTYPE_F32;
  t.ndim = x.ndim;
  t.device = x.device;
  int64_t n = 1;
  for (int32_t d = 0; d < x.ndim; ++d) {
    t.shape[d] = d + 1 == x.ndim ? features : x.shape[d];
    n *= t.shape[d];
  }
  int64_t stride = 1;
  for (int32_t d = x.ndim - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.shape[d];
  }
  data.assign(static_cast<size_t>(n), 0.0f);
  t.data = data.data();
  return t;
}

}  // namespace

void linear_multi(Context& ctx, const seatrt_linear_multi_args* args_in) {
  constexpr const char* kOp = "linear_multi";
  const auto& args = need_args(args_in, kOp);
  const int32_t count = need_count(args.count, kOp);
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  need_dtype(x, kOp, "x", kActivationDtypes);
  for (int32_t i = 0; i < count; ++i) {
    const std::string wname = indexed("weights", i), oname = indexed("outs", i);
    validate_weight(args.weights[i], kOp, wname.c_str());
    if (args.weights[i]->in_features != x.shape[x.ndim - 1])
      invalid(kOp, "x has shape " + shape_string(x) + " but " + wname + "'s in_features is " +
                       std::to_string(args.weights[i]->in_features));
    const seatrt_tensor& out = need_tensor(args.outs[i], kOp, oname.c_str());
    need_linear_out(x, out, args.weights[i]->out_features, kOp, oname);
    if (same_memory(out, x)) invalid(kOp, oname + " must not alias x");
    for (int32_t j = 0; j < i; ++j)
      if (same_memory(out, *args.outs[j])) invalid(kOp, oname + " must not alias " + indexed("outs", j));
  }
  for (int32_t i = 0; i < count; ++i) {
    const seatrt_linear_args one{sizeof(seatrt_linear_args), args.x, args.weights[i], args.outs[i]};
    linear(ctx, &one);
  }
}

void linear_glu(Context& ctx, const seatrt_linear_glu_args* args_in) {
  constexpr const char* kOp = "linear_glu";
  const auto& args = need_args(args_in, kOp);
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  need_dtype(x, kOp, "x", kActivationDtypes);
  validate_weight(args.gate, kOp, "gate");
  validate_weight(args.up, kOp, "up");
  const int64_t k = x.shape[x.ndim - 1];
  if (args.gate->in_features != k || args.up->in_features != k)
    invalid(kOp, "x has shape " + shape_string(x) + " but gate/up in_features are " +
                     std::to_string(args.gate->in_features) + "/" + std::to_string(args.up->in_features));
  const int64_t inter = args.gate->out_features;
  if (args.up->out_features != inter)
    invalid(kOp, "gate has " + std::to_string(inter) + " out_features, up " + std::to_string(args.up->out_features));
  if (args.activation < SEATRT_ACT_GELU_TANH || args.activation > SEATRT_ACT_GELU_ERF)
    invalid(kOp, "unknown activation " + std::to_string(args.activation));
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_linear_out(x, out, inter, kOp, "out");
  if (same_memory(out, x)) invalid(kOp, "out must not alias x");

  // The two products in fp32, then glu into out: the unfused sequence with
  // F32 intermediates.
  std::vector<float> gate_data, up_data;
  seatrt_tensor gate = f32_like_rows(x, inter, gate_data), up = f32_like_rows(x, inter, up_data);
  const seatrt_linear_args g{sizeof(seatrt_linear_args), args.x, args.gate, &gate};
  const seatrt_linear_args u{sizeof(seatrt_linear_args), args.x, args.up, &up};
  linear(ctx, &g);
  linear(ctx, &u);
  const seatrt_glu_args act{sizeof(seatrt_glu_args), args.activation, &gate, &up, args.out};
  glu(ctx, &act);
}

void rms_norm_multi(Context& ctx, const seatrt_rms_norm_multi_args* args_in) {
  constexpr const char* kOp = "rms_norm_multi";
  const auto& args = need_args(args_in, kOp);
  const int32_t count = need_count(args.count, kOp);
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  need_dtype(x, kOp, "x", kActivationDtypes);
  if (!(args.eps >= 0.0f) || !std::isfinite(args.eps)) invalid(kOp, "eps must be finite and >= 0");
  const int64_t n = x.shape[x.ndim - 1];
  for (int32_t i = 0; i < count; ++i) {
    const std::string oname = indexed("outs", i), wname = indexed("weights", i);
    const seatrt_tensor& out = need_tensor(args.outs[i], kOp, oname.c_str());
    need_dtype(out, kOp, oname.c_str(), kActivationDtypes);
    need_same_shape(x, "x", out, oname.c_str(), kOp);
    if (same_memory(out, x)) invalid(kOp, oname + " must not alias x");
    for (int32_t j = 0; j < i; ++j)
      if (same_memory(out, *args.outs[j])) invalid(kOp, oname + " must not alias " + indexed("outs", j));
    if (args.weights[i]) {
      const seatrt_tensor& w = need_tensor(args.weights[i], kOp, wname.c_str());
      need_ndim(w, kOp, wname.c_str(), 1);
      need_dtype(w, kOp, wname.c_str(), kActivationDtypes);
      need_dim(w, kOp, wname.c_str(), 0, n);
    }
  }
  for (int32_t i = 0; i < count; ++i) {
    const seatrt_rms_norm_args one{sizeof(seatrt_rms_norm_args), args.x, args.weights[i], args.eps, args.outs[i]};
    rms_norm(ctx, &one);
  }
}

}  // namespace seatrt::cpu
