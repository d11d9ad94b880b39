// route (ABI 1.5): a MoE layer's router in one call -- x normed with the
// router's gain and with the experts' input gain, the router Linear, top-k.
// On the CPU it is the sequence kernels.h names, run through this provider's
// own rms_norm_multi, linear and router_topk (their arithmetic lives there,
// once), so on F32 tensors it equals that sequence bit for bit; what a device
// provider saves (one read of x, one launch, no logits round trip) does not
// apply here.  Every argument is checked before any output is written, since
// the sequence would otherwise write expert_in and fail later.
#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "ops.hpp"
#include "row_norm.hpp"
#include "seatrt/cpp/tensor.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

constexpr const char* kOp = "route";
constexpr int64_t kMaxTopK = 64;  // kernels.h: top_k in 1..min(64, E)

// A [rows, cols] tensor of one of `dtypes`, or throws naming it.
const seatrt_tensor& need_matrix(const seatrt_tensor* t, const char* name, int64_t rows, int64_t cols,
                                 std::initializer_list<int32_t> dtypes) {
  const seatrt_tensor& m = need_tensor(t, kOp, name);
  need_ndim(m, kOp, name, 2);
  need_dtype(m, kOp, name, dtypes);
  need_dim(m, kOp, name, 0, rows);
  need_dim(m, kOp, name, 1, cols);
  return m;
}

// An optional [n] vector (a gain, the per-expert scale), checked here as the
// operation that reads it would check it, so that it cannot fail half-way.
void need_optional_vector(const seatrt_tensor* t, const char* name, int64_t n) {
  if (!t) return;
  const seatrt_tensor& v = need_tensor(t, kOp, name);
  need_ndim(v, kOp, name, 1);
  need_dtype(v, kOp, name, kActivationDtypes);
  need_dim(v, kOp, name, 0, n);
}

// A contiguous host F32 [rows, cols] tensor over `data`, which it sizes.
seatrt_tensor f32_matrix(int64_t rows, int64_t cols, std::vector<float>& data) {
  data.assign(static_cast<size_t>(rows * cols), 0.0f);
  return sdk::contiguous_tensor(data.data(), SEATRT_DTYPE_F32, {rows, cols}, SEATRT_DEVICE_CPU);
}

}  // namespace

void route(Context& ctx, const seatrt_route_args* args_in) {
  const auto& args = need_args(args_in, kOp);
  need_eps(args.eps, kOp);
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  need_ndim(x, kOp, "x", 2);
  need_dtype(x, kOp, "x", kActivationDtypes);
  const int64_t tokens = x.shape[0], hidden = x.shape[1];
  validate_weight(args.router, kOp, "router");
  if (args.router->in_features != hidden)
    invalid(kOp, "router.in_features " + std::to_string(args.router->in_features) + " is not x's hidden size " +
                     std::to_string(hidden) + " (x has shape " + shape_string(x) + ")");
  const int64_t experts = args.router->out_features;
  const int64_t k = args.top_k;
  const int64_t max_k = std::min(kMaxTopK, experts);
  if (k < 1 || k > max_k)
    invalid(kOp, "top_k " + std::to_string(k) + " is outside 1.." + std::to_string(max_k) + " (min(64, E = " +
                     std::to_string(experts) + "))");
  need_optional_vector(args.router_norm_weight, "router_norm_weight", hidden);
  need_optional_vector(args.per_expert_scale, "per_expert_scale", experts);
  const seatrt_tensor& ids = need_matrix(args.ids, "ids", tokens, k, {SEATRT_DTYPE_I32});
  const seatrt_tensor& weights = need_matrix(args.weights, "weights", tokens, k, {SEATRT_DTYPE_F32});
  if (args.expert_in) {
    need_matrix(args.expert_in, "expert_in", tokens, hidden, kActivationDtypes);
    need_optional_vector(args.expert_norm_weight, "expert_norm_weight", hidden);  // ignored without expert_in
  }
  if (args.logits) need_matrix(args.logits, "logits", tokens, experts, kActivationDtypes);

  // No output may alias x or another output (the contract).
  const std::pair<const seatrt_tensor*, const char*> outs[] = {
      {&ids, "ids"}, {&weights, "weights"}, {args.expert_in, "expert_in"}, {args.logits, "logits"}};
  for (size_t i = 0; i < std::size(outs); ++i) {
    if (!outs[i].first) continue;
    const std::string name = outs[i].second;
    if (same_memory(*outs[i].first, x)) invalid(kOp, name + " must not alias x");
    for (size_t j = 0; j < i; ++j)
      if (outs[j].first && same_memory(*outs[i].first, *outs[j].first))
        invalid(kOp, name + " must not alias " + outs[j].second);
  }
  if (tokens == 0) return;

  // The router's input is fp32 (the contract's "in fp32"); so are the logits
  // top-k reads: the caller's when they are F32, else a temporary of ours,
  // converted into the caller's dtype afterwards, so that ids and weights do
  // not depend on whether or in what dtype the logits are asked for.
  std::vector<float> router_in_data, own_logits_data;
  seatrt_tensor router_in = f32_matrix(tokens, hidden, router_in_data);
  const bool logits_f32 = args.logits && args.logits->dtype == SEATRT_DTYPE_F32;
  seatrt_tensor own_logits{};
  if (!logits_f32) own_logits = f32_matrix(tokens, experts, own_logits_data);
  seatrt_tensor* logits = logits_f32 ? args.logits : &own_logits;

  seatrt_rms_norm_multi_args norms{};
  norms.struct_size = sizeof norms;
  norms.count = args.expert_in ? 2 : 1;
  norms.x = args.x;
  norms.eps = args.eps;
  norms.weights[0] = args.router_norm_weight;
  norms.outs[0] = &router_in;
  norms.weights[1] = args.expert_in ? args.expert_norm_weight : nullptr;
  norms.outs[1] = args.expert_in;
  const seatrt_linear_args product{sizeof product, &router_in, args.router, logits};
  const seatrt_router_topk_args topk{sizeof topk,         logits,    args.top_k, args.renormalize,
                                     args.per_expert_scale, args.ids, args.weights};
  try {
    rms_norm_multi(ctx, &norms);
    linear(ctx, &product);
    // A non-finite logit (from a NaN or infinity in x or the weights) is
    // reported by router_topk before it writes ids or weights.
    router_topk(ctx, &topk);
    if (args.logits && !logits_f32) {
      const seatrt_elementwise_args store{sizeof store, SEATRT_EW_COPY, &own_logits, nullptr, 0.0f, args.logits};
      elementwise(ctx, &store);
    }
  } catch (const sdk::Error& e) {
    // Which step failed, under this operation's name.
    throw sdk::Error(e.code(), std::string(kOp) + ": " + e.what());
  }
}

}  // namespace seatrt::cpu
