#include "step_graph.hpp"

#include <bit>
#include <cmath>
#include <cstddef>

#include "emit.hpp"

namespace seatrt::gemma4 {

namespace {

using sdk::GraphBuilder;

// HF multiplies the looked-up embedding by sqrt(hidden) cast to the weight
// dtype (bf16 in the released checkpoints): 53.066 -> 53.0 for 2816.
float bf16_round(float v) {
  uint32_t bits = std::bit_cast<uint32_t>(v);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xFFFF0000u);
}

// The step's inputs as the graph keeps them, and the activations every
// stage shares.  x always holds the next consumer's normed h.
struct Step {
  const StepModel& m;
  const seatrt_forward_batch& b;
  StepGraph& out;
  int64_t t;
  bool own_window_pool;  // sliding layers paged in the batch's window tables
  seatrt_tensor h, x, branch;

  GraphBuilder& g() { return out.nodes; }
  seatrt_tensor f32(void* p, std::initializer_list<int64_t> shape) const {
    return view(p, SEATRT_DTYPE_F32, shape, m.device_kind);
  }
};

std::string node(int32_t layer, const char* name) { return std::to_string(layer) + "/" + name; }

void embed(Step& s) {
  const int64_t hs = s.m.config.hidden_size;
  emit::embedding(s.g(), "embed", *s.b.token_ids, s.m.weights.embed, bf16_round(std::sqrt(static_cast<float>(hs))),
                  s.h);
  s.g().mark(-1, "hidden", s.g().tensor(s.h));
  if (s.m.config.num_layers > 0)
    emit::rms_norm(s.g(), "layer 0/input_norm", s.h, &s.m.weights.layers[0].input_norm, s.m.config.rms_eps, s.x);
}

// q = rope(q_norm(q_proj x)); k = rope(k_norm(k_proj x)); v = v_norm(v_proj
// x), or of the raw k on k_eq_v layers; k and v stored; attention (scale
// 1: q and k are normed); o_proj; h += post_norm(branch); x = pre_ff_norm(h).
void attention(Step& s, int32_t li) {
  const Config& c = s.m.config;
  const auto& geo = c.layers[static_cast<std::size_t>(li)];
  const LayerWeights& w = s.m.weights.layers[static_cast<std::size_t>(li)];
  const Workspace& ws = s.m.ws;
  GraphBuilder& g = s.g();
  const int64_t t = s.t, d = geo.head_dim, nq = c.num_heads, nkv = geo.kv_heads;
  const float eps = c.rms_eps;

  emit::linear(g, node(li, "attn/q_proj"), s.x, w.q_proj, s.f32(ws.q, {t, nq * d}));
  emit::linear(g, node(li, "attn/k_proj"), s.x, w.k_proj, s.f32(ws.k, {t, nkv * d}));
  if (w.v_proj) emit::linear(g, node(li, "attn/v_proj"), s.x, w.v_proj, s.f32(ws.v, {t, nkv * d}));

  const seatrt_tensor q3 = s.f32(ws.q, {t, nq, d}), k3 = s.f32(ws.k, {t, nkv, d}), v3 = s.f32(ws.v, {t, nkv, d});
  const seatrt_tensor v_rows = s.f32(ws.v, {t * nkv, d});
  emit::rms_norm(g, node(li, "attn/q_norm"), q3, &w.q_norm, eps, q3);
  emit::rope(g, node(li, "attn/q_rope"), q3, *s.b.positions, w.inv_freq, q3);
  // Before k's own norm: on k_eq_v layers v is the raw k, normed.
  emit::rms_norm(g, node(li, "attn/v_norm"), w.v_proj ? v_rows : s.f32(ws.k, {t * nkv, d}), nullptr, eps, v_rows);
  emit::rms_norm(g, node(li, "attn/k_norm"), k3, &w.k_norm, eps, k3);
  emit::rope(g, node(li, "attn/k_rope"), k3, *s.b.positions, w.inv_freq, k3);

  seatrt_kv_layer* cache = &s.out.caches.emplace_back(s.b.kv_layers[li]);
  const bool own_pool = geo.window > 0 && s.own_window_pool;
  emit::kv_store(g, node(li, "attn/kv_store"), k3, cache->v_cache.data ? &v3 : nullptr,
                 own_pool ? *s.b.window_slot_mapping : *s.b.slot_mapping, cache);

  seatrt_tensor attn3 = s.f32(ws.attn, {t, nq, d});
  seatrt_attention_args a{};
  a.q = &q3;
  a.cache = cache;
  a.query_start = s.b.query_start;
  a.seq_lens = s.b.seq_lens;
  a.block_tables = own_pool ? s.b.window_block_tables : s.b.block_tables;
  a.num_seqs = s.b.num_seqs;
  a.max_query_len = s.b.max_query_len;
  a.max_seq_len = s.b.max_seq_len;
  a.window = geo.window;
  a.scale = 1.0f;
  a.softcap = c.attn_softcap;
  a.out = &attn3;
  emit::attention(g, node(li, "attn/attention"), a);
  emit::linear(g, node(li, "attn/o_proj"), s.f32(ws.attn, {t, nq * d}), w.o_proj, s.branch);

  emit::rms_norm(g, node(li, "attn/post_norm"), s.branch, &w.post_attention_norm, eps, s.branch);
  emit::elementwise(g, node(li, "attn/residual"), SEATRT_EW_ADD, s.h, &s.branch, 0.0f, s.h);
  emit::rms_norm(g, node(li, "ffn/pre_norm"), s.h, &w.pre_ff_norm, eps, s.x);
}

// branch = down(gelu_tanh(gate x) * up x).
void dense_mlp(Step& s, int32_t li) {
  const LayerWeights& w = s.m.weights.layers[static_cast<std::size_t>(li)];
  const Workspace& ws = s.m.ws;
  const int64_t inter = s.m.config.intermediate_size;
  const seatrt_tensor gate = s.f32(ws.mlp_gate, {s.t, inter}), up = s.f32(ws.mlp_up, {s.t, inter}),
                      act = s.f32(ws.mlp_act, {s.t, inter});
  emit::linear(s.g(), node(li, "mlp/gate_proj"), s.x, w.gate_proj, gate);
  emit::linear(s.g(), node(li, "mlp/up_proj"), s.x, w.up_proj, up);
  emit::glu(s.g(), node(li, "mlp/glu"), gate, up, act);
  emit::linear(s.g(), node(li, "mlp/down_proj"), act, w.down_proj, s.branch);
}

// The routed experts of h: the router reads rmsnorm(h) with the folded
// router scale, the experts rmsnorm(h) * pre_ff_norm_2.  Returns eout.
seatrt_tensor experts(Step& s, int32_t li) {
  const Config& c = s.m.config;
  const LayerWeights& w = s.m.weights.layers[static_cast<std::size_t>(li)];
  const Workspace& ws = s.m.ws;
  GraphBuilder& g = s.g();
  const int64_t t = s.t, hs = c.hidden_size, e = c.num_experts, k = c.top_k;
  const seatrt_tensor r = s.f32(ws.router_in, {t, hs}), logits = s.f32(ws.router_logits, {t, e});
  const seatrt_tensor ids = view(ws.router_ids, SEATRT_DTYPE_I32, {t, k}, s.m.device_kind);
  const seatrt_tensor weights = s.f32(ws.router_weights, {t, k});
  const seatrt_tensor ein = s.f32(ws.expert_in, {t, hs}), eout = s.f32(ws.expert_out, {t, hs});

  emit::rms_norm(g, node(li, "experts/router_norm"), s.h, &w.router_input_weight, c.rms_eps, r);
  emit::rms_norm(g, node(li, "experts/input_norm"), s.h, &w.pre_ff_norm_2, c.rms_eps, ein);
  emit::linear(g, node(li, "experts/router"), r, w.router_proj, logits);
  emit::router_topk(g, node(li, "experts/topk"), logits, c.top_k, &w.per_expert_scale, ids, weights);
  emit::moe(g, node(li, "experts/moe"), c.num_experts, ein, ids, weights, w.expert_gate.data(), w.expert_up.data(),
            w.expert_down.data(), eout);
  g.mark(li, "router_ids", g.tensor(ids));
  g.mark(li, "router_weights", g.tensor(weights));
  return eout;
}

// h = (h + post_ff_norm(sum)) * layer_scalar; x = the next layer's input
// norm of h (the final norm after the last layer, when logits are wanted).
void residual_end(Step& s, int32_t li, const seatrt_tensor& sum) {
  const Config& c = s.m.config;
  const LayerWeights& w = s.m.weights.layers[static_cast<std::size_t>(li)];
  GraphBuilder& g = s.g();
  emit::rms_norm(g, node(li, "end/post_norm"), sum, &w.post_ff_norm, c.rms_eps, sum);
  emit::elementwise(g, node(li, "end/residual"), SEATRT_EW_ADD, s.h, &sum, 0.0f, s.h);
  if (w.layer_scalar != 1.0f)
    emit::elementwise(g, node(li, "end/scale"), SEATRT_EW_SCALE, s.h, nullptr, w.layer_scalar, s.h);
  const bool last = li + 1 == c.num_layers;
  if (!last || s.b.num_logits > 0) {
    const seatrt_tensor* next = last ? &s.m.weights.final_norm : &s.m.weights.layers[static_cast<std::size_t>(li) + 1].input_norm;
    emit::rms_norm(g, node(li, "end/next_norm"), s.h, next, c.rms_eps, s.x);
  }
  g.mark(li, "hidden", g.tensor(s.h));
}

// A dense layer's feed-forward end: the MLP's branch alone.
void dense_layer_end(Step& s, int32_t li) { residual_end(s, li, s.branch); }

// A MoE layer: the dense branch and the experts' each normed, summed, then
// the common end.  The two branches are independent until end/post_norm_2.
void moe_layer_end(Step& s, int32_t li) {
  const Config& c = s.m.config;
  const LayerWeights& w = s.m.weights.layers[static_cast<std::size_t>(li)];
  const seatrt_tensor m1 = s.f32(s.m.ws.m1, {s.t, c.hidden_size});
  emit::rms_norm(s.g(), node(li, "mlp/post_norm_1"), s.branch, &w.post_ff_norm_1, c.rms_eps, m1);
  const seatrt_tensor eout = experts(s, li);
  emit::rms_norm(s.g(), node(li, "end/post_norm_2"), eout, &w.post_ff_norm_2, c.rms_eps, eout);
  emit::elementwise(s.g(), node(li, "end/sum"), SEATRT_EW_ADD, m1, &eout, 0.0f, m1);
  residual_end(s, li, m1);
}

// logits = softcap(lm_head(x[logits_index])).
void head(Step& s) {
  const Config& c = s.m.config;
  const int64_t n = s.b.num_logits;
  if (n == 0) return;
  if (c.num_layers == 0) emit::rms_norm(s.g(), "head/final_norm", s.h, &s.m.weights.final_norm, c.rms_eps, s.x);
  const seatrt_tensor rows = s.f32(s.m.ws.rows, {n, c.hidden_size});
  emit::gather_rows(s.g(), "head/gather", s.x, *s.b.logits_index, rows);
  emit::linear(s.g(), "head/lm_head", rows, &s.m.weights.lm_head, *s.b.logits);
  if (c.final_softcap > 0.0f)
    emit::elementwise(s.g(), "head/softcap", SEATRT_EW_SOFTCAP, *s.b.logits, nullptr, c.final_softcap, *s.b.logits);
}

bool uses_window_pool(const seatrt_forward_batch& b) {
  return b.struct_size >= offsetof(seatrt_forward_batch, window_slot_mapping) + sizeof(b.window_slot_mapping) &&
         b.window_block_tables && b.window_slot_mapping;
}

}  // namespace

std::unique_ptr<StepGraph> build_step_graph(const StepModel& m, const seatrt_forward_batch& b) {
  auto out = std::make_unique<StepGraph>();
  const int64_t t = b.num_tokens, hs = m.config.hidden_size;
  out->name = std::string(b.max_query_len > 1 ? "prefill" : "decode") + " t=" + std::to_string(t) +
              " s=" + std::to_string(b.num_seqs);
  Step s{m, b, *out, t, uses_window_pool(b), {}, {}, {}};
  s.h = s.f32(m.ws.h, {t, hs});
  s.x = s.f32(m.ws.x, {t, hs});
  s.branch = s.f32(m.ws.branch, {t, hs});

  embed(s);
  for (int32_t li = 0; li < m.config.num_layers; ++li) {
    attention(s, li);
    dense_mlp(s, li);
    if (m.config.moe)
      moe_layer_end(s, li);
    else
      dense_layer_end(s, li);
  }
  head(s);
  return out;
}

std::string node_stage(const std::string& name) {
  if (name == "embed" || name.starts_with("layer ")) return "embed";
  if (name.starts_with("head/")) return "head";
  const auto slash = name.find('/');
  const std::string part = name.substr(slash + 1, name.find('/', slash + 1) - slash - 1);
  if (part == "attn" || part == "ffn") return "attention";
  if (part == "mlp") return name.ends_with("/post_norm_1") ? "layer end" : "dense MLP";
  if (part == "experts") return "experts";
  return "layer end";
}

}  // namespace seatrt::gemma4
