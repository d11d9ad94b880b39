// The fused operations of one input: linear_multi (several Linears of one x),
// linear_glu (gate, up and glu) and rms_norm_multi (one x, several gains).
// Decode shapes take one launch each (k_linear.cu, k_fused_norm.cu): x is
// read, staged or split into BF16 planes once for all the weights, and the
// launches between them are gone.  Shapes the fused launches do not cover
// (prefill rows, dense or unaligned weights) run the single operations.
// Every argument is checked before anything is enqueued.
#include <algorithm>
#include <cmath>
#include <string>

#include "context.hpp"
#include "convert.hpp"
#include "fused_norm.hpp"
#include "ops.hpp"
#include "views.hpp"

namespace seatrt::cuda {
namespace {

static_assert(kFusedMax <= kNormMultiMax, "rms_norm_multi kernel holds kFusedMax outputs");

int32_t need_count(const std::string& op, int32_t count) {
  if (count < 1 || count > kFusedMax)
    invalid(op, "count " + std::to_string(count) + " is not in 1.." + std::to_string(kFusedMax));
  return count;
}

std::string indexed(const char* name, int32_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

// An output of `features` columns for each row of x, in an activation dtype.
Mat need_rows_out(const std::string& op, const std::string& name, const seatrt_tensor* t, const Mat& x,
                  int64_t features) {
  const auto& out = need(op, name.c_str(), t);
  need_activation_dtype(op, name.c_str(), out);
  const Mat m = as_mat(op, name.c_str(), out);
  if (m.rows != x.rows || m.cols != features)
    invalid(op, name + " must be [" + std::to_string(x.rows) + " rows, " + std::to_string(features) + "]");
  if (m.data == x.data) invalid(op, name + " must not alias x");
  return m;
}

// Decode-shaped F32 x: scratch for its one split into BF16 planes (the
// launchers use it where the kernel does not stage x itself).
void* planes_for(seatrt_kernel_context* ctx, seatrt_stream s, const Mat& x) {
  if (x.dtype != SEATRT_DTYPE_F32 || x.rows > kLinearTensorCoreRows || x.cols % 32 != 0) return nullptr;
  return scratch(ctx, s, x_planes_bytes(x));
}

size_t align256(size_t b) { return (b + 255) / 256 * 256; }

// x of an operation: present, on the device, an activation dtype, 2-D view.
Mat need_x(const std::string& op, const seatrt_tensor* t) {
  const auto& x = need(op, "x", t);
  need_activation_dtype(op, "x", x);
  return as_mat(op, "x", x);
}

}  // namespace

void linear_multi(seatrt_kernel_context* ctx, seatrt_stream s, const LinearMultiArgs* args) {
  const std::string op = "linear_multi";
  const auto& a = *args;
  const int32_t count = need_count(op, a.count);
  use_device(ctx);
  const Mat mx = need_x(op, a.x);
  WeightRef refs[kFusedMax];
  Mat outs[kFusedMax];
  for (int32_t i = 0; i < count; ++i) {
    const std::string wn = indexed("weights", i), on = indexed("outs", i);
    if (!a.weights[i]) invalid(op, wn + " is NULL");
    refs[i] = weight_ref(op, wn, *a.weights[i]);
    if (a.weights[i]->in_features != mx.cols)
      invalid(op, "x has " + std::to_string(mx.cols) + " columns but " + wn + "'s in_features is " +
                      std::to_string(a.weights[i]->in_features));
    outs[i] = need_rows_out(op, on, a.outs[i], mx, a.weights[i]->out_features);
    for (int32_t j = 0; j < i; ++j)
      if (outs[i].data == outs[j].data) invalid(op, on + " must not alias " + indexed("outs", j));
  }
  if (mx.rows == 0) return;
  GemvProblem p;
  p.k = mx.cols;
  p.x = mx;
  p.x_planes = planes_for(ctx, s, mx);
  const int e = launch_linear_multi(s, count, refs, outs, p);
  if (e != kNotFused) {
    check(e, "linear_multi launch");
    return;
  }
  // Prefill rows on the tensor cores: x rounded to BF16 once for all the
  // weights (the prefill option; linear() would round it again for each),
  // and each weight's BF16 expansion in turn, in one scratch block [copy |
  // expansion] (stream order: a weight's GEMM is done before the next
  // expansion overwrites it).
  const bool round_x = ctx->prefill_bf16 && mx.dtype == SEATRT_DTYPE_F32;
  if (mx.rows > kLinearTensorCoreRows && (round_x || mx.dtype == SEATRT_DTYPE_BF16) && mx.rows <= 65535LL * 1024) {
    size_t expand = 0;
    for (int32_t i = 0; i < count; ++i) expand = std::max(expand, linear_tc_expand_bytes(refs[i], outs[i].cols, mx.cols));
    const size_t copy = round_x ? align256(bf16_copy_bytes(view3_of(mx))) : 0;
    char* block = copy + expand ? static_cast<char*>(scratch(ctx, s, copy + expand)) : nullptr;
    GemvProblem one;
    one.k = mx.cols;
    one.x = mx;
    if (round_x) {
      check(launch_to_bf16(s, view3_of(mx), block), "linear_multi launch (F32 -> BF16)");
      one.x = Mat{block, SEATRT_DTYPE_BF16, mx.rows, mx.cols, mx.cols};
    }
    one.w_bf16 = expand ? block + copy : nullptr;
    for (int32_t i = 0; i < count; ++i) {
      one.n = outs[i].cols;
      one.out = outs[i];
      check(launch_linear(s, refs[i], one), "linear_multi launch");
    }
    return;
  }
  for (int32_t i = 0; i < count; ++i) {
    seatrt_linear_args one{};
    one.struct_size = sizeof one;
    one.x = a.x;
    one.weight = a.weights[i];
    one.out = a.outs[i];
    linear(ctx, s, &one);
  }
}

void linear_glu(seatrt_kernel_context* ctx, seatrt_stream s, const LinearGluArgs* args) {
  const std::string op = "linear_glu";
  const auto& a = *args;
  use_device(ctx);
  const Mat mx = need_x(op, a.x);
  if (!a.gate || !a.up) invalid(op, "gate or up is NULL");
  const WeightRef gate = weight_ref(op, "gate", *a.gate), up = weight_ref(op, "up", *a.up);
  if (a.gate->in_features != mx.cols || a.up->in_features != mx.cols)
    invalid(op, "x has " + std::to_string(mx.cols) + " columns but gate/up in_features are " +
                    std::to_string(a.gate->in_features) + "/" + std::to_string(a.up->in_features));
  const int64_t inter = a.gate->out_features;
  if (a.up->out_features != inter)
    invalid(op, "gate has " + std::to_string(inter) + " out_features, up " + std::to_string(a.up->out_features));
  if (a.activation < SEATRT_ACT_GELU_TANH || a.activation > SEATRT_ACT_GELU_ERF)
    invalid(op, "unknown activation " + std::to_string(a.activation));
  const Mat mo = need_rows_out(op, "out", a.out, mx, inter);
  if (mx.rows == 0) return;

  GemvProblem p;
  p.n = inter;
  p.k = mx.cols;
  p.x = mx;
  p.out = mo;
  p.x_planes = planes_for(ctx, s, mx);
  const int e = launch_linear_glu(s, gate, up, a.activation, p);
  if (e != kNotFused) {
    check(e, "linear_glu launch");
    return;
  }
  // Prefill rows, both weights FP4: one GEMM with the GLU in its epilogue,
  // on BF16 x (the prefill option's copy of F32 x) and BF16 expansions of
  // the weights, in one scratch block [copy | gate expansion | up's].
  if (mx.rows > kLinearTensorCoreRows && (mx.dtype == SEATRT_DTYPE_BF16 || ctx->prefill_bf16)) {
    const size_t one = linear_tc_expand_bytes(gate, inter, mx.cols);
    if (one && linear_tc_expand_bytes(up, inter, mx.cols) == one) {
      const bool round = mx.dtype == SEATRT_DTYPE_F32;
      const size_t copy = round ? align256(bf16_copy_bytes(view3_of(mx))) : 0;
      char* block = static_cast<char*>(scratch(ctx, s, copy + 2 * one));
      GemvProblem g = p;
      if (round) {
        check(launch_to_bf16(s, view3_of(mx), block), "linear_glu launch (F32 -> BF16)");
        g.x = Mat{block, SEATRT_DTYPE_BF16, mx.rows, mx.cols, mx.cols};
      }
      g.x_planes = nullptr;
      g.w_bf16 = block + copy;
      const int eg = launch_linear_glu_tc(s, gate, up, a.activation, g);
      if (eg != kNotFused) {
        check(eg, "linear_glu launch (tensor cores)");
        return;
      }
    }
  }
  // The single operations, their F32 products in one scratch block: [BF16
  // copy of x (the prefill option) | up | gate, unless out is F32 and holds
  // it | x's planes | the BF16 expansion of gate, then of up (tensor-core
  // rows)].  glu then reads gate and up elementwise, so gate may be out
  // itself.
  const bool tc_rows = mx.rows > kLinearTensorCoreRows;
  const bool round_x = ctx->prefill_bf16 && mx.dtype == SEATRT_DTYPE_F32 && tc_rows;
  const bool gate_in_out = mo.dtype == SEATRT_DTYPE_F32;
  const size_t copy = round_x ? align256(bf16_copy_bytes(view3_of(mx))) : 0;
  const size_t product = align256(sizeof(float) * static_cast<size_t>(mx.rows) * static_cast<size_t>(inter));
  const size_t planes = p.x_planes ? align256(x_planes_bytes(mx)) : 0;
  const bool bf16_x = round_x || mx.dtype == SEATRT_DTYPE_BF16;
  const size_t expand = tc_rows && bf16_x ? std::max(linear_tc_expand_bytes(gate, inter, mx.cols),
                                                     linear_tc_expand_bytes(up, inter, mx.cols))
                                          : 0;
  const size_t before_expand = copy + product * (gate_in_out ? 1 : 2) + planes;
  char* block = static_cast<char*>(scratch(ctx, s, before_expand + expand));
  Mat xin = mx;
  if (round_x) {
    check(launch_to_bf16(s, view3_of(mx), block), "linear_glu launch (F32 -> BF16)");
    xin = Mat{block, SEATRT_DTYPE_BF16, mx.rows, mx.cols, mx.cols};
  }
  const Mat up_out{block + copy, SEATRT_DTYPE_F32, mx.rows, inter, inter};
  const Mat gate_out = gate_in_out ? mo : Mat{block + copy + product, SEATRT_DTYPE_F32, mx.rows, inter, inter};
  GemvProblem one;
  one.n = inter;
  one.k = mx.cols;
  one.x = xin;
  one.x_planes = planes ? block + copy + product * (gate_in_out ? 1 : 2) : nullptr;
  one.out = gate_out;
  one.w_bf16 = expand ? block + before_expand : nullptr;  // gate's expansion, then up's (stream order)
  check(launch_linear(s, gate, one), "linear_glu launch (gate)");
  one.out = up_out;
  check(launch_linear(s, up, one), "linear_glu launch (up)");
  check(launch_glu(s, a.activation, gate_out, up_out, mo), "linear_glu launch (glu)");
}

void rms_norm_multi(seatrt_kernel_context* ctx, seatrt_stream s, const RmsNormMultiArgs* args) {
  const std::string op = "rms_norm_multi";
  const auto& a = *args;
  const int32_t count = need_count(op, a.count);
  use_device(ctx);
  const Mat mx = need_x(op, a.x);
  const seatrt_tensor& x = *a.x;
  if (!(a.eps >= 0.0f) || !std::isfinite(a.eps)) invalid(op, "eps must be finite and >= 0");
  NormOuts o;
  o.count = count;
  for (int32_t i = 0; i < count; ++i) {
    const std::string on = indexed("outs", i), wn = indexed("weights", i);
    const auto& out = need(op, on.c_str(), a.outs[i]);
    bool same = out.ndim == x.ndim;
    for (int d = 0; same && d < x.ndim; ++d) same = out.shape[d] == x.shape[d];
    if (!same) invalid(op, on + " and x differ in shape");
    o.out[i] = need_rows_out(op, on, a.outs[i], mx, mx.cols);
    for (int32_t j = 0; j < i; ++j)
      if (o.out[i].data == o.out[j].data) invalid(op, on + " must not alias " + indexed("outs", j));
    if (a.weights[i]) {
      const auto& w = need(op, wn.c_str(), a.weights[i]);
      need_activation_dtype(op, wn.c_str(), w);
      need_contiguous(op, wn.c_str(), w);
      if (w.ndim != 1 || w.shape[0] != mx.cols) invalid(op, wn + " must be [" + std::to_string(mx.cols) + "]");
      o.gain[i] = Gain{w.data, w.dtype};
    }
  }
  check(launch_rms_norm_multi(s, mx, a.eps, o), "rms_norm_multi launch");
}

}  // namespace seatrt::cuda
