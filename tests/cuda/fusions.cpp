#include "fusions.hpp"

#include "harness.hpp"

#include <string>

namespace seatrt_test::fusions {
namespace {

seatrt_rms_norm_args norm(const seatrt_tensor* x, const seatrt_tensor* w, float eps, seatrt_tensor* out) {
  seatrt_rms_norm_args a{};
  a.x = x;
  a.weight = w;
  a.eps = eps;
  a.out = out;
  return a;
}

seatrt_linear_args linear(const seatrt_tensor* x, const seatrt_linear_weight* w, seatrt_tensor* out) {
  seatrt_linear_args a{};
  a.x = x;
  a.weight = w;
  a.out = out;
  return a;
}

seatrt_elementwise_args ew(int32_t op, const seatrt_tensor* a, const seatrt_tensor* b, float alpha, seatrt_tensor* out) {
  seatrt_elementwise_args e{};
  e.op = op;
  e.a = a;
  e.b = b;
  e.alpha = alpha;
  e.out = out;
  return e;
}

seatrt_rope_args rope(seatrt_tensor* x, const seatrt_tensor* positions, const seatrt_tensor* inv_freq) {
  seatrt_rope_args a{};
  a.x = x;
  a.positions = positions;
  a.inv_freq = inv_freq;
  a.out = x;
  return a;
}

}  // namespace

void linear_multi(GraphBuilder& g, const seatrt_tensor* x, const std::vector<const seatrt_linear_weight*>& weights,
                  const std::vector<seatrt_tensor*>& outs) {
  static const char* const kNames[] = {"0/attn/q_proj", "0/attn/k_proj", "0/attn/v_proj", "0/attn/extra_proj"};
  for (std::size_t i = 0; i < weights.size(); ++i)
    g.add<SEATRT_OP_LINEAR>(linear(x, weights[i], outs[i]), i < 4 ? kNames[i] : "0/attn/proj " + std::to_string(i));
}

void linear_glu(GraphBuilder& g, int32_t act, const seatrt_tensor* x, const seatrt_linear_weight* gate,
                const seatrt_linear_weight* up, seatrt_tensor* gate_t, seatrt_tensor* up_t, seatrt_tensor* out) {
  g.add<SEATRT_OP_LINEAR>(linear(x, gate, gate_t), "0/mlp/gate_proj");
  g.add<SEATRT_OP_LINEAR>(linear(x, up, up_t), "0/mlp/up_proj");
  seatrt_glu_args a{};
  a.activation = act;
  a.gate = gate_t;
  a.up = up_t;
  a.out = out;
  g.add<SEATRT_OP_GLU>(a, "0/mlp/glu");
}

void rms_norm_multi(GraphBuilder& g, const seatrt_tensor* x, float eps, const std::vector<const seatrt_tensor*>& weights,
                    const std::vector<seatrt_tensor*>& outs) {
  for (std::size_t i = 0; i < weights.size(); ++i)
    g.add<SEATRT_OP_RMS_NORM>(norm(x, weights[i], eps, outs[i]), "0/experts/norm " + std::to_string(i));
}

void add_rms_norm(GraphBuilder& g, const AddRmsNorm& a, const char* prefix) {
  const std::string p = prefix;
  g.add<SEATRT_OP_RMS_NORM>(norm(a.branch, a.branch_weight, a.eps, a.branch), p + "/post_norm");
  g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_ADD, a.residual, a.branch, 0.0f, a.residual), p + "/residual");
  if (a.scale != 1.0f) g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_SCALE, a.residual, nullptr, a.scale, a.residual), p + "/scale");
  if (a.out) g.add<SEATRT_OP_RMS_NORM>(norm(a.residual, a.out_weight, a.eps, a.out), p + "/next_norm");
}

void rms_norm_rope(GraphBuilder& g, seatrt_tensor* x, const seatrt_tensor* weight, float eps,
                   const seatrt_tensor* positions, const seatrt_tensor* inv_freq, const char* prefix) {
  const std::string p = prefix;
  g.add<SEATRT_OP_RMS_NORM>(norm(x, weight, eps, x), p + "_norm");
  g.add<SEATRT_OP_ROPE>(rope(x, positions, inv_freq), p + "_rope");
}

void qkv_store(GraphBuilder& g, const QkvStore& a) {
  rms_norm_rope(g, a.q, a.q_weight, a.eps, a.positions, a.inv_freq, "0/attn/q");
  g.add<SEATRT_OP_RMS_NORM>(norm(a.v ? a.v : a.k, nullptr, a.eps, a.v_rows), "0/attn/v_norm");
  rms_norm_rope(g, a.k, a.k_weight, a.eps, a.positions, a.inv_freq, "0/attn/k");
  seatrt_kv_store_args s{};
  s.k = a.k;
  s.v = a.cache->v_cache.data ? a.v_rows : nullptr;
  s.slot_mapping = a.slot_mapping;
  s.cache = a.cache;
  g.add<SEATRT_OP_KV_STORE>(s, "0/attn/kv_store");
}

void route(GraphBuilder& g, const Route& a) {
  g.add<SEATRT_OP_RMS_NORM>(norm(a.h, a.router_norm, a.eps, a.r), "0/experts/router_norm");
  if (a.ein) g.add<SEATRT_OP_RMS_NORM>(norm(a.h, a.input_norm, a.eps, a.ein), "0/experts/input_norm");
  g.add<SEATRT_OP_LINEAR>(linear(a.r, a.router, a.logits), "0/experts/router");
  seatrt_router_topk_args t{};
  t.logits = a.logits;
  t.top_k = a.top_k;
  t.renormalize = a.renormalize;
  t.per_expert_scale = a.per_expert_scale;
  t.ids = a.ids;
  t.weights = a.weights;
  g.add<SEATRT_OP_ROUTER_TOPK>(t, "0/experts/topk");
}

void moe_end(GraphBuilder& g, const MoeEnd& a) {
  g.add<SEATRT_OP_RMS_NORM>(norm(a.dense, a.w1, a.end.eps, a.m1), "0/mlp/post_norm_1");
  g.add<SEATRT_OP_RMS_NORM>(norm(a.eout, a.w2, a.end.eps, a.eout), "0/end/post_norm_2");
  g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_ADD, a.m1, a.eout, 0.0f, a.m1), "0/end/sum");
  add_rms_norm(g, a.end, "0/end");
}

}  // namespace seatrt_test::fusions

namespace seatrt_test {

std::string plan_vs_eager(fusions::GraphBuilder& on_cuda, fusions::GraphBuilder& on_cpu, const std::string& name) {
  Plan plan(cuda(), on_cuda, name);
  plan.launch();
  cuda().sync();
  cpu().run_nodes(on_cpu);
  return plan.describe();
}

}  // namespace seatrt_test
