// The provider's fused operations: what its planner (plan_rewrite.cpp)
// turns a run of primitive nodes into.  They are private to this provider;
// each stands for exactly the primitive sequence written next to it, so a
// plan's result equals running the nodes in order.  Pointers are the
// graph's own tensors and weights (the plan keeps nothing else).
#pragma once

#include <cstdint>

#include "seatrt/ops.h"

namespace seatrt::cuda {

constexpr int32_t kFusedMax = 4;  // most weights / gains one fused call takes

// rms_norm(x, x_weight) -> x; ADD(residual, x) -> residual; SCALE(residual,
// residual_scale); [rms_norm(residual, out_weight) -> out]:
//   residual <- (residual + rmsnorm(x) * x_weight) * residual_scale
//   out      <- rmsnorm(residual) * out_weight        (only if out != NULL)
// x is only read (the normed branch is never stored); out may alias x;
// residual must not alias x or out.
struct AddRmsNormArgs {
  const seatrt_tensor* x = nullptr;
  const seatrt_tensor* x_weight = nullptr;
  seatrt_tensor* residual = nullptr;
  float eps = 0.0f;
  float residual_scale = 1.0f;
  const seatrt_tensor* out_weight = nullptr;
  seatrt_tensor* out = nullptr;
};

// rms_norm(x, weight) then rope, per (token, head) row of [T, heads, D],
// the normed value kept in fp32 in between.  out may alias x.
struct RmsNormRopeArgs {
  const seatrt_tensor* x = nullptr;
  const seatrt_tensor* weight = nullptr;
  float eps = 0.0f;
  const seatrt_tensor* positions = nullptr;
  const seatrt_tensor* inv_freq = nullptr;
  seatrt_tensor* out = nullptr;
};

// `count` linears of one x: outs[i] = x * weights[i]^T.
struct LinearMultiArgs {
  int32_t count = 0;
  const seatrt_tensor* x = nullptr;
  const seatrt_linear_weight* weights[kFusedMax] = {};
  seatrt_tensor* outs[kFusedMax] = {};
};

// linear(x, gate), linear(x, up), glu(activation): out = act(x gate^T) *
// (x up^T), both products kept in fp32.
struct LinearGluArgs {
  int32_t activation = 0;
  const seatrt_tensor* x = nullptr;
  const seatrt_linear_weight* gate = nullptr;
  const seatrt_linear_weight* up = nullptr;
  seatrt_tensor* out = nullptr;
};

// rms_norm of one x with several gains (one mean of squares per row).
struct RmsNormMultiArgs {
  int32_t count = 0;
  const seatrt_tensor* x = nullptr;
  float eps = 0.0f;
  const seatrt_tensor* weights[kFusedMax] = {};
  seatrt_tensor* outs[kFusedMax] = {};
};

// q <- rope(rmsnorm(q) q_weight) in place; k' = rope(rmsnorm(k) k_weight);
// v' = rmsnorm(v or the raw k when v is NULL) v_weight; k', v' stored at
// slot_mapping.  k and v are only read.
struct QkvNormRopeStoreArgs {
  float eps = 0.0f;
  seatrt_tensor* q = nullptr;
  const seatrt_tensor* k = nullptr;
  const seatrt_tensor* v = nullptr;
  const seatrt_tensor* q_weight = nullptr;
  const seatrt_tensor* k_weight = nullptr;
  const seatrt_tensor* v_weight = nullptr;
  const seatrt_tensor* positions = nullptr;
  const seatrt_tensor* inv_freq = nullptr;
  const seatrt_tensor* slot_mapping = nullptr;
  seatrt_kv_layer* cache = nullptr;
};

// s = rmsnorm(a) a_weight + rmsnorm(b) b_weight (never stored);
// residual <- (residual + rmsnorm(s) sum_weight) * residual_scale;
// out <- rmsnorm(residual) out_weight (only if out != NULL).
struct AddRmsNormPairArgs {
  float eps = 0.0f;
  const seatrt_tensor* a = nullptr;
  const seatrt_tensor* a_weight = nullptr;
  const seatrt_tensor* b = nullptr;
  const seatrt_tensor* b_weight = nullptr;
  const seatrt_tensor* sum_weight = nullptr;
  seatrt_tensor* residual = nullptr;
  float residual_scale = 1.0f;
  const seatrt_tensor* out_weight = nullptr;
  seatrt_tensor* out = nullptr;
};

// A MoE router from one read of x: logits = (rmsnorm(x) router_norm_weight)
// router^T; ids, weights = router_topk(logits) (softmax scoring);
// expert_in = rmsnorm(x) expert_norm_weight.  logits and expert_in may be
// NULL (not wanted).  A logit may differ from the sequence's by a few ulps
// (the norm's 1/rms is applied after the product).
struct RouteArgs {
  float eps = 0.0f;
  const seatrt_tensor* x = nullptr;
  const seatrt_tensor* router_norm_weight = nullptr;
  const seatrt_linear_weight* router = nullptr;
  int32_t top_k = 0;
  int32_t renormalize = 0;
  const seatrt_tensor* per_expert_scale = nullptr;
  const seatrt_tensor* expert_norm_weight = nullptr;
  seatrt_tensor* expert_in = nullptr;
  seatrt_tensor* logits = nullptr;
  seatrt_tensor* ids = nullptr;
  seatrt_tensor* weights = nullptr;
};

}  // namespace seatrt::cuda
