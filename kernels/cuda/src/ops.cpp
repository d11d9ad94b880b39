// Checks and launches for the element-level ops: elementwise, embedding,
// rms_norm, glu, rope, gather_rows, router_topk, and the fused norms
// add_rms_norm, rms_norm_rope and add_rms_norm_pair.  Fields of a kind this
// provider does not implement were refused before (supports.cpp).
#include <string>

#include "context.hpp"
#include "fused_norm.hpp"
#include "ops.hpp"
#include "views.hpp"

namespace seatrt::cuda {
namespace {

void same_shape(const std::string& op, const char* an, const seatrt_tensor& a, const char* bn,
                const seatrt_tensor& b) {
  bool same = a.ndim == b.ndim;
  for (int i = 0; same && i < a.ndim; ++i) same = a.shape[i] == b.shape[i];
  if (!same) invalid(op, std::string(an) + " and " + bn + " differ in shape");
}

}  // namespace

void elementwise(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_elementwise_args* args) {
  const std::string op = "elementwise";
  const auto& a = *args;
  use_device(ctx);
  const auto& ta = need(op, "a", a.a);
  const auto& to = need(op, "out", a.out);
  need_activation_dtype(op, "a", ta);
  need_activation_dtype(op, "out", to);
  same_shape(op, "a", ta, "out", to);
  if (a.op < SEATRT_EW_ADD || a.op > SEATRT_EW_COPY) invalid(op, "unknown op " + std::to_string(a.op));
  const Mat ma = as_mat(op, "a", ta), mo = as_mat(op, "out", to);
  Mat mb = ma;
  if (a.op == SEATRT_EW_ADD || a.op == SEATRT_EW_MUL) {
    const auto& tb = need(op, "b", a.b);
    need_activation_dtype(op, "b", tb);
    // b matches a's trailing axes.
    if (tb.ndim > ta.ndim) invalid(op, "b has more dims than a");
    for (int i = 0; i < tb.ndim; ++i)
      if (tb.shape[tb.ndim - 1 - i] != ta.shape[ta.ndim - 1 - i])
        invalid(op, "b does not match the trailing axes of a");
    mb = as_mat(op, "b", tb);
    if (mb.rows == 0 && ma.rows > 0) invalid(op, "b is empty");
  }
  if (a.op == SEATRT_EW_SOFTCAP && !(a.alpha > 0.0f)) invalid(op, "softcap needs alpha > 0");
  check(launch_elementwise(s, a.op, ma, mb, a.alpha, mo), "elementwise launch");
}

void embedding(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_embedding_args* args) {
  const std::string op = "embedding";
  const auto& a = *args;
  use_device(ctx);
  const auto& ids = need(op, "ids", a.ids);
  const auto& table = need(op, "table", a.table);
  const auto& out = need(op, "out", a.out);
  need_dtype(op, "ids", ids, SEATRT_DTYPE_I32);
  need_contiguous(op, "ids", ids);
  need_activation_dtype(op, "table", table);
  need_activation_dtype(op, "out", out);
  if (table.ndim != 2) invalid(op, "table must be [V, H]");
  const Mat mt = as_mat(op, "table", table), mo = as_mat(op, "out", out);
  if (mo.rows != numel(ids) || mo.cols != mt.cols) invalid(op, "out must be [T, H]");
  check(launch_embedding(s, static_cast<const int32_t*>(ids.data), numel(ids), mt, a.scale, mo),
        "embedding launch");
}

void rms_norm(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_rms_norm_args* args) {
  const std::string op = "rms_norm";
  const auto& a = *args;
  use_device(ctx);
  const auto& x = need(op, "x", a.x);
  const auto& out = need(op, "out", a.out);
  need_activation_dtype(op, "x", x);
  need_activation_dtype(op, "out", out);
  same_shape(op, "x", x, "out", out);
  const Mat mx = as_mat(op, "x", x), mo = as_mat(op, "out", out);
  const void* w = nullptr;
  int32_t wd = 0;
  if (a.weight) {
    const auto& tw = need(op, "weight", a.weight);
    need_activation_dtype(op, "weight", tw);
    need_contiguous(op, "weight", tw);
    if (numel(tw) != mx.cols) invalid(op, "weight must have N = " + std::to_string(mx.cols) + " entries");
    w = tw.data;
    wd = tw.dtype;
  }
  if (mx.cols == 0) return;
  check(launch_rms_norm(s, mx, w, wd, a.eps, mo), "rms_norm launch");
}

void glu(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_glu_args* args) {
  const std::string op = "glu";
  const auto& a = *args;
  use_device(ctx);
  const auto& g = need(op, "gate", a.gate);
  const auto& u = need(op, "up", a.up);
  const auto& out = need(op, "out", a.out);
  need_activation_dtype(op, "gate", g);
  need_activation_dtype(op, "up", u);
  need_activation_dtype(op, "out", out);
  same_shape(op, "gate", g, "up", u);
  same_shape(op, "gate", g, "out", out);
  if (a.activation < SEATRT_ACT_GELU_TANH || a.activation > SEATRT_ACT_GELU_ERF)
    invalid(op, "unknown activation " + std::to_string(a.activation));
  check(launch_glu(s, a.activation, as_mat(op, "gate", g), as_mat(op, "up", u), as_mat(op, "out", out)),
        "glu launch");
}

void rope(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_rope_args* args) {
  const std::string op = "rope";
  const auto& a = *args;
  use_device(ctx);
  const auto& x = need(op, "x", a.x);
  const auto& pos = need(op, "positions", a.positions);
  const auto& f = need(op, "inv_freq", a.inv_freq);
  const auto& out = need(op, "out", a.out);
  need_activation_dtype(op, "x", x);
  need_activation_dtype(op, "out", out);
  need_dtype(op, "positions", pos, SEATRT_DTYPE_I32);
  need_dtype(op, "inv_freq", f, SEATRT_DTYPE_F32);
  need_contiguous(op, "positions", pos);
  need_contiguous(op, "inv_freq", f);
  same_shape(op, "x", x, "out", out);
  const View3 vx = as_view3(op, "x", x), vo = as_view3(op, "out", out);
  if (vx.d2 % 2 != 0) invalid(op, "head dim must be even");
  if (numel(pos) != vx.d0) invalid(op, "positions must have T entries");
  if (numel(f) != vx.d2 / 2) invalid(op, "inv_freq must have D/2 entries");
  check(launch_rope(s, vx, static_cast<const int32_t*>(pos.data), static_cast<const float*>(f.data), vo),
        "rope launch");
}

void gather_rows(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_gather_rows_args* args) {
  const std::string op = "gather_rows";
  const auto& a = *args;
  use_device(ctx);
  const auto& x = need(op, "x", a.x);
  const auto& idx = need(op, "index", a.index);
  const auto& out = need(op, "out", a.out);
  need_activation_dtype(op, "x", x);
  need_activation_dtype(op, "out", out);
  need_dtype(op, "index", idx, SEATRT_DTYPE_I32);
  need_contiguous(op, "index", idx);
  const Mat mx = as_mat(op, "x", x), mo = as_mat(op, "out", out);
  if (mo.rows != numel(idx) || mo.cols != mx.cols) invalid(op, "out must be [n, cols of x]");
  check(launch_gather_rows(s, mx, static_cast<const int32_t*>(idx.data), mo), "gather_rows launch");
}

void router_topk(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_router_topk_args* args) {
  const std::string op = "router_topk";
  const auto& a = *args;
  use_device(ctx);
  const auto& lg = need(op, "logits", a.logits);
  const auto& ids = need(op, "ids", a.ids);
  const auto& w = need(op, "weights", a.weights);
  need_activation_dtype(op, "logits", lg);
  need_dtype(op, "ids", ids, SEATRT_DTYPE_I32);
  need_dtype(op, "weights", w, SEATRT_DTYPE_F32);
  need_contiguous(op, "ids", ids);
  need_contiguous(op, "weights", w);
  const Mat ml = as_mat(op, "logits", lg);
  if (ml.cols < 1 || ml.cols > 1024) unsupported(op, "at most 1024 experts");
  if (a.top_k < 1 || a.top_k > 64 || a.top_k > ml.cols) invalid(op, "top_k must be in 1..min(64, E)");
  if (numel(ids) != ml.rows * a.top_k || numel(w) != ml.rows * a.top_k) invalid(op, "ids/weights must be [T, k]");
  const void* pes = nullptr;
  int32_t pd = 0;
  if (a.per_expert_scale) {
    const auto& tp = need(op, "per_expert_scale", a.per_expert_scale);
    need_activation_dtype(op, "per_expert_scale", tp);
    need_contiguous(op, "per_expert_scale", tp);
    if (numel(tp) != ml.cols) invalid(op, "per_expert_scale must have E entries");
    pes = tp.data;
    pd = tp.dtype;
  }
  check(launch_router_topk(s, ml, a.top_k, a.renormalize != 0, pes, pd, static_cast<int32_t*>(ids.data),
                           static_cast<float*>(w.data)),
        "router_topk launch");
}

void add_rms_norm(seatrt_kernel_context* ctx, seatrt_stream s, const AddRmsNormArgs* args) {
  const std::string op = "add_rms_norm";
  const auto& a = *args;
  use_device(ctx);
  const auto& x = need(op, "x", a.x);
  const auto& res = need(op, "residual", a.residual);
  need_activation_dtype(op, "x", x);
  need_activation_dtype(op, "residual", res);
  same_shape(op, "x", x, "residual", res);
  if (x.data == res.data) invalid(op, "residual must not alias x");
  const Mat mx = as_mat(op, "x", x), mr = as_mat(op, "residual", res);
  Mat mo;  // data NULL: no second norm
  Gain out_gain;
  if (a.out) {
    const auto& out = need(op, "out", a.out);
    need_activation_dtype(op, "out", out);
    same_shape(op, "x", x, "out", out);
    if (out.data == res.data) invalid(op, "out must not alias residual");
    mo = as_mat(op, "out", out);
    out_gain = optional_gain(op, "out_weight", a.out_weight, mx.cols);
  }
  const Gain x_gain = optional_gain(op, "x_weight", a.x_weight, mx.cols);
  need_eps(op, a.eps);
  if (!(a.residual_scale == a.residual_scale) || a.residual_scale > 3.4e38f || a.residual_scale < -3.4e38f)
    invalid(op, "residual_scale must be finite");
  check(launch_add_rms_norm(s, mx, x_gain, mr, a.eps, a.residual_scale, out_gain, mo), "add_rms_norm launch");
}

void rms_norm_rope(seatrt_kernel_context* ctx, seatrt_stream s, const RmsNormRopeArgs* args) {
  const std::string op = "rms_norm_rope";
  const auto& a = *args;
  use_device(ctx);
  const auto& x = need(op, "x", a.x);
  const auto& pos = need(op, "positions", a.positions);
  const auto& f = need(op, "inv_freq", a.inv_freq);
  const auto& out = need(op, "out", a.out);
  need_activation_dtype(op, "x", x);
  need_activation_dtype(op, "out", out);
  need_dtype(op, "positions", pos, SEATRT_DTYPE_I32);
  need_dtype(op, "inv_freq", f, SEATRT_DTYPE_F32);
  need_contiguous(op, "positions", pos);
  need_contiguous(op, "inv_freq", f);
  same_shape(op, "x", x, "out", out);
  const View3 vx = as_view3(op, "x", x), vo = as_view3(op, "out", out);
  if (vx.d2 % 2 != 0) invalid(op, "head dim must be even");
  // The row is staged in shared memory (4 bytes per element, 48 KiB).
  if (vx.d2 > 8192) unsupported(op, "head dim above 8192");
  if (numel(pos) != vx.d0) invalid(op, "positions must have T entries");
  if (numel(f) != vx.d2 / 2) invalid(op, "inv_freq must have D/2 entries");
  const Gain gain = optional_gain(op, "weight", a.weight, vx.d2);
  need_eps(op, a.eps);
  check(launch_rms_norm_rope(s, vx, gain, a.eps, static_cast<const int32_t*>(pos.data),
                             static_cast<const float*>(f.data), vo),
        "rms_norm_rope launch");
}

void add_rms_norm_pair(seatrt_kernel_context* ctx, seatrt_stream s, const AddRmsNormPairArgs* args) {
  const std::string op = "add_rms_norm_pair";
  const auto& a = *args;
  use_device(ctx);
  const auto& ta = need(op, "a", a.a);
  const auto& tb = need(op, "b", a.b);
  const auto& res = need(op, "residual", a.residual);
  need_activation_dtype(op, "a", ta);
  need_activation_dtype(op, "b", tb);
  need_activation_dtype(op, "residual", res);
  same_shape(op, "a", ta, "b", tb);
  same_shape(op, "a", ta, "residual", res);
  if (tb.dtype != ta.dtype || res.dtype != ta.dtype) invalid(op, "a, b and residual must have one dtype");
  if (res.data == ta.data || res.data == tb.data) invalid(op, "residual must not alias a or b");
  const Mat ma = as_mat(op, "a", ta), mb = as_mat(op, "b", tb), mr = as_mat(op, "residual", res);
  Mat mo;  // data NULL: no last norm
  Gain out_gain;
  if (a.out) {
    const auto& out = need(op, "out", a.out);
    need_activation_dtype(op, "out", out);
    same_shape(op, "a", ta, "out", out);
    if (out.dtype != ta.dtype) invalid(op, "out must have a's dtype");
    if (out.data == res.data) invalid(op, "out must not alias residual");
    mo = as_mat(op, "out", out);
    out_gain = optional_gain(op, "out_weight", a.out_weight, ma.cols);
  }
  const Gain a_gain = optional_gain(op, "a_weight", a.a_weight, ma.cols);
  const Gain b_gain = optional_gain(op, "b_weight", a.b_weight, ma.cols);
  const Gain s_gain = optional_gain(op, "sum_weight", a.sum_weight, ma.cols);
  need_eps(op, a.eps);
  if (!(a.residual_scale == a.residual_scale) || a.residual_scale > 3.4e38f || a.residual_scale < -3.4e38f)
    invalid(op, "residual_scale must be finite");
  check(launch_add_rms_norm_pair(s, ma, a_gain, mb, b_gain, s_gain, mr, a.eps, a.residual_scale, out_gain, mo),
        "add_rms_norm_pair launch");
}

}  // namespace seatrt::cuda
