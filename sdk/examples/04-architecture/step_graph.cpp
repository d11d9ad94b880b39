// One forward step as a graph of primitive operations.  The nodes name
// their tensors by memory, so reusing a workspace in every layer is fine:
// the planner orders the nodes by what they read and write.
#include <cmath>
#include <string>

#include "model.hpp"
#include "seatrt/cpp/tensor.hpp"

namespace tinydense {

namespace {

class StepWriter {
 public:
  StepWriter(const ModelParts& parts, const seatrt_forward_batch& batch, Step& step)
      : p_(parts), b_(batch), s_(step), g_(step.graph), t_(batch.num_tokens) {}

  void write() {
    const Config& c = p_.config;
    const int64_t h = c.hidden_size;
    seatrt_tensor* x = view(p_.residual, {t_, h});
    embed(x);
    for (int32_t l = 0; l < c.num_layers; ++l) {
      const LayerWeights& w = p_.layers[static_cast<std::size_t>(l)];
      const std::string name = "layer " + std::to_string(l) + "/";
      seatrt_tensor* normed = view(p_.normed, {t_, h});
      rms_norm(x, &w.input_norm, normed, name + "input_norm");
      attention(l, w, normed, name + "attention/");
      add(x, normed, name + "attention/residual");
      rms_norm(x, &w.post_attention_norm, normed, name + "post_attention_norm");
      mlp(w, normed, name + "mlp/");
      add(x, normed, name + "mlp/residual");
    }
    if (b_.num_logits > 0) lm_head(x);
  }

 private:
  seatrt_tensor* view(float* base, std::initializer_list<int64_t> shape) {
    return g_.tensor(seatrt::sdk::contiguous_tensor(base, SEATRT_DTYPE_F32, shape, p_.device_kind));
  }
  // The batch's descriptors are the caller's: keep copies at stable addresses.
  const seatrt_tensor* input(const seatrt_tensor* t) { return g_.tensor(*t); }

  void embed(seatrt_tensor* x) {
    auto& a = g_.add<SEATRT_OP_EMBEDDING>({}, "embedding");
    a.ids = input(b_.token_ids);
    a.table = &p_.embedding;
    a.scale = 1.0f;
    a.out = x;
  }

  void rms_norm(const seatrt_tensor* x, const seatrt_tensor* weight, seatrt_tensor* out, std::string name) {
    auto& a = g_.add<SEATRT_OP_RMS_NORM>({}, std::move(name));
    a.x = x;
    a.weight = weight;
    a.eps = p_.config.rms_norm_eps;
    a.out = out;
  }

  void linear(const seatrt_tensor* x, const seatrt_linear_weight* w, seatrt_tensor* out, const seatrt_tensor* bias,
              std::string name) {
    auto& a = g_.add<SEATRT_OP_LINEAR>({}, std::move(name));
    a.x = x;
    a.weight = w;
    a.out = out;
    a.bias = bias;
  }

  void add(seatrt_tensor* x, const seatrt_tensor* delta, std::string name) {
    auto& a = g_.add<SEATRT_OP_ELEMENTWISE>({}, std::move(name));
    a.op = SEATRT_EW_ADD;
    a.a = x;
    a.b = delta;
    a.out = x;
  }

  // q/k/v projections with bias, RoPE, the new K/V into the paged cache,
  // attention over it, and o_proj back into `normed`.
  void attention(int32_t layer, const LayerWeights& w, seatrt_tensor* normed, const std::string& name) {
    const Config& c = p_.config;
    const int64_t hq = c.num_heads, hkv = c.num_kv_heads, d = c.head_dim;
    linear(normed, w.q, view(p_.q, {t_, hq * d}), &w.q_bias, name + "q_proj");
    linear(normed, w.k, view(p_.k, {t_, hkv * d}), &w.k_bias, name + "k_proj");
    linear(normed, w.v, view(p_.v, {t_, hkv * d}), &w.v_bias, name + "v_proj");
    seatrt_tensor* q = view(p_.q, {t_, hq, d});
    seatrt_tensor* k = view(p_.k, {t_, hkv, d});
    const seatrt_tensor* positions = input(b_.positions);
    for (seatrt_tensor* rotated : {q, k}) {
      auto& r = g_.add<SEATRT_OP_ROPE>({}, name + (rotated == q ? "q_rope" : "k_rope"));
      r.x = rotated;
      r.positions = positions;
      r.inv_freq = &p_.inv_freq;
      r.out = rotated;
    }
    seatrt_kv_layer* cache = &s_.caches.emplace_back(b_.kv_layers[layer]);
    auto& store = g_.add<SEATRT_OP_KV_STORE>({}, name + "kv_store");
    store.k = k;
    store.v = view(p_.v, {t_, hkv, d});
    store.slot_mapping = input(b_.slot_mapping);
    store.cache = cache;
    auto& a = g_.add<SEATRT_OP_ATTENTION>({}, name + "attention");
    a.q = q;
    a.cache = cache;
    a.query_start = input(b_.query_start);
    a.seq_lens = input(b_.seq_lens);
    a.block_tables = input(b_.block_tables);
    a.num_seqs = b_.num_seqs;
    a.max_query_len = b_.max_query_len;
    a.max_seq_len = b_.max_seq_len;
    a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    a.out = view(p_.attn, {t_, hq, d});
    linear(view(p_.attn, {t_, hq * d}), w.o, normed, nullptr, name + "o_proj");
  }

  // down(silu(gate(x)) * up(x)) back into `normed`.
  void mlp(const LayerWeights& w, seatrt_tensor* normed, const std::string& name) {
    const int64_t inter = p_.config.intermediate_size;
    seatrt_tensor* gate = view(p_.gate, {t_, inter});
    seatrt_tensor* up = view(p_.up, {t_, inter});
    linear(normed, w.gate, gate, nullptr, name + "gate_proj");
    linear(normed, w.up, up, nullptr, name + "up_proj");
    auto& glu = g_.add<SEATRT_OP_GLU>({}, name + "glu");
    glu.activation = SEATRT_ACT_SILU;
    glu.gate = gate;
    glu.up = up;
    glu.out = gate;
    linear(gate, w.down, normed, nullptr, name + "down_proj");
  }

  // Only the rows that need logits go through the final norm and the tied
  // LM head.
  void lm_head(const seatrt_tensor* x) {
    seatrt_tensor* picked = view(p_.picked, {b_.num_logits, p_.config.hidden_size});
    auto& gather = g_.add<SEATRT_OP_GATHER_ROWS>({}, "final/gather_rows");
    gather.x = x;
    gather.index = input(b_.logits_index);
    gather.out = picked;
    rms_norm(picked, &p_.final_norm, picked, "final/norm");
    seatrt_tensor* logits = g_.tensor(*b_.logits);
    linear(picked, p_.lm_head, logits, nullptr, "final/lm_head");
  }

  const ModelParts& p_;
  const seatrt_forward_batch& b_;
  Step& s_;
  seatrt::sdk::GraphBuilder& g_;
  int64_t t_;
};

}  // namespace

void build_step(const ModelParts& parts, const seatrt_forward_batch& batch, Step& step) {
  StepWriter(parts, batch, step).write();
}

}  // namespace tinydense
