// The primitive node sequences the CUDA planner fuses, written as
// /work/briefs/gemma_graph.md lays them out (the Gemma plugin emits exactly
// these), so a test can plan one on the CUDA provider and run the same
// nodes one by one on the CPU provider.  Every tensor is the caller's; the
// builder copies only the args.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seatrt/cpp/graph.hpp"

namespace seatrt_test::fusions {

using seatrt::sdk::GraphBuilder;

// linear(x, W_i) -> outs[i], one node per weight (=> linear_multi).
void linear_multi(GraphBuilder& g, const seatrt_tensor* x, const std::vector<const seatrt_linear_weight*>& weights,
                  const std::vector<seatrt_tensor*>& outs);

// gate_t = linear(x, gate), up_t = linear(x, up), out = glu(act, gate_t,
// up_t) (=> linear_glu; gate_t and up_t are dropped by the fusion).
void linear_glu(GraphBuilder& g, int32_t act, const seatrt_tensor* x, const seatrt_linear_weight* gate,
                const seatrt_linear_weight* up, seatrt_tensor* gate_t, seatrt_tensor* up_t, seatrt_tensor* out);

// rms_norm(x, weights[i]) -> outs[i] (=> rms_norm_multi).
void rms_norm_multi(GraphBuilder& g, const seatrt_tensor* x, float eps, const std::vector<const seatrt_tensor*>& weights,
                    const std::vector<seatrt_tensor*>& outs);

// A layer end: rms_norm(branch, branch_weight) -> branch (in place);
// residual = residual + branch; residual *= scale when scale != 1;
// rms_norm(residual, out_weight) -> out when out != NULL (=> add_rms_norm).
struct AddRmsNorm {
  seatrt_tensor* branch;
  const seatrt_tensor* branch_weight;  // NULL = no gain
  seatrt_tensor* residual;
  float eps;
  float scale;
  const seatrt_tensor* out_weight;     // NULL = no gain
  seatrt_tensor* out;                  // NULL = no next norm
};
void add_rms_norm(GraphBuilder& g, const AddRmsNorm& a, const char* prefix = "0/end");

// rms_norm(x, weight) -> x, rope(x) -> x, both in place.
void rms_norm_rope(GraphBuilder& g, seatrt_tensor* x, const seatrt_tensor* weight, float eps,
                   const seatrt_tensor* positions, const seatrt_tensor* inv_freq, const char* prefix);

// The attention input (=> qkv_norm_rope_store): q_norm, q_rope; v_norm
// (v_rows = rmsnorm(v) in place, or rmsnorm of the RAW k into v_rows when
// v is NULL, the k_eq_v layers); k_norm, k_rope; kv_store(k, v_rows or
// NULL when the cache has no v_cache).
struct QkvStore {
  seatrt_tensor* q;
  seatrt_tensor* k;
  seatrt_tensor* v;       // NULL: v_rows from the raw k
  seatrt_tensor* v_rows;  // v itself, or the buffer k_eq_v layers norm into
  const seatrt_tensor* q_weight;
  const seatrt_tensor* k_weight;
  float eps;
  const seatrt_tensor* positions;
  const seatrt_tensor* inv_freq;
  const seatrt_tensor* slot_mapping;
  seatrt_kv_layer* cache;
};
void qkv_store(GraphBuilder& g, const QkvStore& a);

// A MoE layer's router (=> route when logits and r are read by no later
// node): r = rmsnorm(h) * router_norm; ein = rmsnorm(h) * input_norm;
// logits = linear(r, router); ids, weights = router_topk(logits).
struct Route {
  const seatrt_tensor* h;
  const seatrt_tensor* router_norm;
  const seatrt_tensor* input_norm;
  float eps;
  seatrt_tensor* r;
  seatrt_tensor* ein;  // NULL: no experts' input norm
  const seatrt_linear_weight* router;
  seatrt_tensor* logits;
  int32_t top_k;
  const seatrt_tensor* per_expert_scale;
  seatrt_tensor* ids;
  seatrt_tensor* weights;
  int32_t renormalize = 1;
};
void route(GraphBuilder& g, const Route& a);

// A MoE layer's end: rms_norm(dense, w1) -> m1; rms_norm(eout, w2) -> eout;
// m1 = m1 + eout; then add_rms_norm(m1, sum_weight, residual, ...)
// (=> add_rms_norm_pair on prefill-sized graphs).
struct MoeEnd {
  const seatrt_tensor* dense;
  const seatrt_tensor* w1;
  seatrt_tensor* m1;
  seatrt_tensor* eout;
  const seatrt_tensor* w2;
  AddRmsNorm end;  // end.branch must be m1
};
void moe_end(GraphBuilder& g, const MoeEnd& a);

}  // namespace seatrt_test::fusions

namespace seatrt_test {

// Plans `on_cuda` on the CUDA provider (launched once) and launches it, then
// runs `on_cpu` (the same nodes over the CPU provider's tensors) one by one
// through run(); returns plan_describe's lines, for a check of which fused
// kernel the planner chose.
std::string plan_vs_eager(fusions::GraphBuilder& on_cuda, fusions::GraphBuilder& on_cpu, const std::string& name);

}  // namespace seatrt_test
