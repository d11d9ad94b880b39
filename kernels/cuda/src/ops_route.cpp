// route: a MoE layer's router in one operation.  Checks the
// arguments, then runs the fused kernel (k_route.cu) where it fits -- the
// decode sizes of Gemma-4 (F32 x, at most 32 tokens, a BF16 router of at
// most 256 experts) -- and otherwise the sequence the operation stands for
// through this provider's own ops (rms_norm_multi, linear, router_topk),
// its temporaries in a buffer of the stream's own (the ops' scratch would be
// reused under them).
#include <string>

#include "context.hpp"
#include "ops.hpp"
#include "route.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "seatrt/cpp/tensor.hpp"
#include "views.hpp"

namespace seatrt::cuda {

namespace {

// A [rows, cols] output of `dtype` (contiguous rows), or throws naming it.
Mat need_out(const std::string& op, const char* name, const seatrt_tensor* t, int64_t rows, int64_t cols,
             int32_t dtype) {
  const auto& v = need(op, name, t);
  if (dtype) need_dtype(op, name, v, dtype);
  else need_activation_dtype(op, name, v);
  const Mat m = as_mat(op, name, v);
  if (m.rows != rows || m.cols != cols)
    invalid(op, std::string(name) + " must be [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
  return m;
}

// A contiguous F32 tensor of x's shape over `data` (the sequence's router
// input: rms_norm_multi wants every output shaped as x).
seatrt_tensor f32_like(const seatrt_tensor& x, void* data) {
  seatrt_tensor t = x;
  t.dtype = SEATRT_DTYPE_F32;
  t.data = data;
  int64_t stride = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    t.strides[i] = stride;
    stride *= t.shape[i];
  }
  return t;
}

bool same_shape(const seatrt_tensor& a, const seatrt_tensor& b) {
  if (a.ndim != b.ndim) return false;
  for (int32_t d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d]) return false;
  return true;
}

const float* f32_gain(const Gain& g) {
  return g.data && g.dtype == SEATRT_DTYPE_F32 ? static_cast<const float*>(g.data) : nullptr;
}

// The sequence route stands for, through this provider's own ops: the
// router input (x normed with its gain) at `r_data`, the logits (F32) into
// `logits`.
void run_sequence(seatrt_kernel_context* ctx, seatrt_stream s, const RouteArgs& a, const seatrt_tensor& x,
                  void* r_data, seatrt_tensor* logits) {
  seatrt_tensor r = f32_like(x, r_data);
  RmsNormMultiArgs n;
  n.count = a.expert_in ? 2 : 1;
  n.x = a.x;
  n.eps = a.eps;
  n.weights[0] = a.router_norm_weight;
  n.outs[0] = &r;
  n.weights[1] = a.expert_norm_weight;
  n.outs[1] = a.expert_in;
  rms_norm_multi(ctx, s, &n);
  seatrt_linear_args l{};
  l.struct_size = sizeof l;
  l.x = &r;
  l.weight = a.router;
  l.out = logits;
  linear(ctx, s, &l);
  seatrt_router_topk_args t{};
  t.struct_size = sizeof t;
  t.logits = logits;
  t.top_k = a.top_k;
  t.renormalize = a.renormalize;
  t.per_expert_scale = a.per_expert_scale;
  t.ids = a.ids;
  t.weights = a.weights;
  router_topk(ctx, s, &t);
}

}  // namespace

void route(seatrt_kernel_context* ctx, seatrt_stream s, const RouteArgs* args) {
  const std::string op = "route";
  if (!args || !args->router) invalid(op, "args or router is NULL");
  use_device(ctx);
  need_eps(op, args->eps);
  const auto& x = need(op, "x", args->x);
  need_activation_dtype(op, "x", x);
  const Mat mx = as_mat(op, "x", x);
  const int64_t T = mx.rows, H = mx.cols;
  const seatrt_linear_weight& rw = *args->router;
  const WeightRef w = weight_ref(op, "router", rw);
  if (rw.in_features != H)
    invalid(op, "router.in_features (" + std::to_string(rw.in_features) + ") must be x's last dim (" +
                    std::to_string(H) + ")");
  const int64_t E = rw.out_features;
  if (E > 1024) unsupported(op, "at most 1024 experts");
  const int32_t k = args->top_k;
  if (k < 1 || k > 64 || k > E) invalid(op, "top_k must be in 1..min(64, E)");
  const Gain rg = optional_gain(op, "router_norm_weight", args->router_norm_weight, H);
  const Mat ids = need_out(op, "ids", args->ids, T, k, SEATRT_DTYPE_I32);
  const Mat wts = need_out(op, "weights", args->weights, T, k, SEATRT_DTYPE_F32);
  need_contiguous(op, "ids", *args->ids);
  need_contiguous(op, "weights", *args->weights);
  Mat ein, lg;
  Gain eg;
  if (args->expert_in) {
    ein = need_out(op, "expert_in", args->expert_in, T, H, 0);
    if (!same_shape(*args->expert_in, x)) invalid(op, "expert_in must have x's shape");
    eg = optional_gain(op, "expert_norm_weight", args->expert_norm_weight, H);
  }
  if (args->logits) lg = need_out(op, "logits", args->logits, T, E, 0);
  const void* pes = nullptr;
  int32_t pes_dtype = 0;
  if (args->per_expert_scale) {
    const auto& tp = need(op, "per_expert_scale", args->per_expert_scale);
    need_activation_dtype(op, "per_expert_scale", tp);
    need_contiguous(op, "per_expert_scale", tp);
    if (numel(tp) != E) invalid(op, "per_expert_scale must have E = " + std::to_string(E) + " entries");
    pes = tp.data;
    pes_dtype = tp.dtype;
  }
  // No output may alias x or another output.
  const void* outs[4] = {ids.data, wts.data, ein.data, lg.data};
  const char* names[4] = {"ids", "weights", "expert_in", "logits"};
  for (int i = 0; i < 4; ++i) {
    if (!outs[i]) continue;
    if (outs[i] == mx.data) invalid(op, std::string(names[i]) + " must not alias x");
    for (int j = 0; j < i; ++j)
      if (outs[j] == outs[i]) invalid(op, std::string(names[i]) + " must not alias " + names[j]);
  }
  if (T == 0) return;

  // The stream's route buffer: [counter | logits T x E | router input T x H].
  constexpr size_t kCounterBytes = 256;
  const size_t logits_bytes = static_cast<size_t>(T * E) * sizeof(float);
  char* buf = static_cast<char*>(route_buffer(ctx, s, kCounterBytes + logits_bytes + static_cast<size_t>(T * H) * 4));
  float* own_logits = reinterpret_cast<float*>(buf + kCounterBytes);

  RouteProblem p;
  p.w = static_cast<const __nv_bfloat16*>(w.data);
  p.w_row_elems = w.data_row_bytes / 2;
  p.e = E;
  p.h = H;
  p.x = mx;
  p.router_gain = f32_gain(rg);
  p.expert_gain = f32_gain(eg);
  p.expert_in = ein.data && ein.dtype == SEATRT_DTYPE_F32 ? static_cast<float*>(ein.data) : nullptr;
  p.expert_in_stride = ein.row_stride;
  // Top-k reads fp32 logits whatever the caller asks for: the caller's when
  // they are F32, else the buffer's, stored into the caller's dtype after.
  const bool own = !lg.data || lg.dtype != SEATRT_DTYPE_F32;
  p.logits = own ? own_logits : static_cast<float*>(lg.data);
  p.logits_stride = own ? E : lg.row_stride;
  p.eps = args->eps;
  p.top_k = k;
  p.renormalize = args->renormalize != 0;
  p.per_expert_scale = pes;
  p.scale_dtype = pes_dtype;
  p.ids = static_cast<int32_t*>(ids.data);
  p.weights = static_cast<float*>(wts.data);
  p.counter = reinterpret_cast<int32_t*>(buf);
  // Every gain given must be F32 and expert_in (when wanted) F32 for the
  // kernel.
  const bool fused = w.kind == int32_t(WeightKind::DenseBf16) && (!rg.data || p.router_gain) &&
                     (!args->expert_in || (p.expert_in && (!eg.data || p.expert_gain))) && route_fused_fits(p);
  seatrt_tensor own_lg = sdk::contiguous_tensor(own_logits, SEATRT_DTYPE_F32, {T, E}, SEATRT_DEVICE_CUDA);
  if (fused) {
    check(launch_route_fused(s, p), "route launch");
  } else {
    run_sequence(ctx, s, *args, x, buf + kCounterBytes + logits_bytes, own ? &own_lg : args->logits);
  }
  if (own && args->logits) {
    seatrt_elementwise_args store{};
    store.struct_size = sizeof store;
    store.op = SEATRT_EW_COPY;
    store.a = &own_lg;
    store.out = args->logits;
    elementwise(ctx, s, &store);
  }
}

}  // namespace seatrt::cuda
