// Emitting primitive nodes (ops.h) into a GraphBuilder: one function per
// kind the Gemma-4 model uses.  Every tensor descriptor is copied into the
// builder, so callers may pass temporaries; weights and KV layers are
// pointed at and must outlive the graph.
#pragma once

#include <initializer_list>
#include <string>

#include "seatrt/cpp/graph.hpp"
#include "seatrt/cpp/tensor.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::gemma4 {

// A contiguous view of `data` with the given shape.
inline seatrt_tensor view(void* data, int32_t dtype, std::initializer_list<int64_t> shape, int32_t device_kind) {
  return sdk::contiguous_tensor(data, dtype, shape, device_kind);
}

namespace emit {

using sdk::GraphBuilder;

inline const seatrt_tensor* keep(GraphBuilder& g, const seatrt_tensor* t) { return t ? g.tensor(*t) : nullptr; }

inline void embedding(GraphBuilder& g, std::string name, const seatrt_tensor& ids, const seatrt_tensor& table,
                      float scale, const seatrt_tensor& out) {
  seatrt_embedding_args a{};
  a.ids = g.tensor(ids);
  a.table = g.tensor(table);
  a.scale = scale;
  a.out = g.tensor(out);
  g.add<SEATRT_OP_EMBEDDING>(a, std::move(name));
}

// weight NULL: no gain.
inline void rms_norm(GraphBuilder& g, std::string name, const seatrt_tensor& x, const seatrt_tensor* weight,
                     float eps, const seatrt_tensor& out) {
  seatrt_rms_norm_args a{};
  a.x = g.tensor(x);
  a.weight = keep(g, weight);
  a.eps = eps;
  a.out = g.tensor(out);
  g.add<SEATRT_OP_RMS_NORM>(a, std::move(name));
}

inline void linear(GraphBuilder& g, std::string name, const seatrt_tensor& x, const seatrt_linear_weight* w,
                   const seatrt_tensor& out) {
  seatrt_linear_args a{};
  a.x = g.tensor(x);
  a.weight = w;
  a.out = g.tensor(out);
  g.add<SEATRT_OP_LINEAR>(a, std::move(name));
}

// b NULL where the op does not read it (SCALE, SOFTCAP).
inline void elementwise(GraphBuilder& g, std::string name, seatrt_elementwise_op op, const seatrt_tensor& a_in,
                        const seatrt_tensor* b, float alpha, const seatrt_tensor& out) {
  seatrt_elementwise_args a{};
  a.op = op;
  a.a = g.tensor(a_in);
  a.b = keep(g, b);
  a.alpha = alpha;
  a.out = g.tensor(out);
  g.add<SEATRT_OP_ELEMENTWISE>(a, std::move(name));
}

inline void glu(GraphBuilder& g, std::string name, const seatrt_tensor& gate, const seatrt_tensor& up,
                const seatrt_tensor& out) {
  seatrt_glu_args a{};
  a.activation = SEATRT_ACT_GELU_TANH;
  a.gate = g.tensor(gate);
  a.up = g.tensor(up);
  a.out = g.tensor(out);
  g.add<SEATRT_OP_GLU>(a, std::move(name));
}

inline void rope(GraphBuilder& g, std::string name, const seatrt_tensor& x, const seatrt_tensor& positions,
                 const seatrt_tensor& inv_freq, const seatrt_tensor& out) {
  seatrt_rope_args a{};
  a.x = g.tensor(x);
  a.positions = g.tensor(positions);
  a.inv_freq = g.tensor(inv_freq);
  a.out = g.tensor(out);
  g.add<SEATRT_OP_ROPE>(a, std::move(name));
}

// v NULL: the layer stores one tensor.
inline void kv_store(GraphBuilder& g, std::string name, const seatrt_tensor& k, const seatrt_tensor* v,
                     const seatrt_tensor& slots, seatrt_kv_layer* cache) {
  seatrt_kv_store_args a{};
  a.k = g.tensor(k);
  a.v = keep(g, v);
  a.slot_mapping = g.tensor(slots);
  a.cache = cache;
  g.add<SEATRT_OP_KV_STORE>(a, std::move(name));
}

// `args` as the caller filled them; its tensors are copied in.
inline void attention(GraphBuilder& g, std::string name, seatrt_attention_args args) {
  args.q = g.tensor(*args.q);
  args.query_start = g.tensor(*args.query_start);
  args.seq_lens = g.tensor(*args.seq_lens);
  args.block_tables = g.tensor(*args.block_tables);
  args.out = g.tensor(*args.out);
  g.add<SEATRT_OP_ATTENTION>(args, std::move(name));
}

// Softmax scoring, renormalised, times per_expert_scale.
inline void router_topk(GraphBuilder& g, std::string name, const seatrt_tensor& logits, int32_t top_k,
                        const seatrt_tensor* per_expert_scale, const seatrt_tensor& ids, const seatrt_tensor& weights) {
  seatrt_router_topk_args a{};
  a.logits = g.tensor(logits);
  a.top_k = top_k;
  a.renormalize = 1;
  a.per_expert_scale = keep(g, per_expert_scale);
  a.ids = g.tensor(ids);
  a.weights = g.tensor(weights);
  g.add<SEATRT_OP_ROUTER_TOPK>(a, std::move(name));
}

// GELU-tanh experts; gate/up/down are arrays of num_experts weights.
inline void moe(GraphBuilder& g, std::string name, int32_t num_experts, const seatrt_tensor& x,
                const seatrt_tensor& ids, const seatrt_tensor& weights, const seatrt_linear_weight* gate,
                const seatrt_linear_weight* up, const seatrt_linear_weight* down, const seatrt_tensor& out) {
  seatrt_moe_args a{};
  a.activation = SEATRT_ACT_GELU_TANH;
  a.num_experts = num_experts;
  a.x = g.tensor(x);
  a.ids = g.tensor(ids);
  a.weights = g.tensor(weights);
  a.gate = gate;
  a.up = up;
  a.down = down;
  a.out = g.tensor(out);
  g.add<SEATRT_OP_MOE>(a, std::move(name));
}

inline void gather_rows(GraphBuilder& g, std::string name, const seatrt_tensor& x, const seatrt_tensor& index,
                        const seatrt_tensor& out) {
  seatrt_gather_rows_args a{};
  a.x = g.tensor(x);
  a.index = g.tensor(index);
  a.out = g.tensor(out);
  g.add<SEATRT_OP_GATHER_ROWS>(a, std::move(name));
}

}  // namespace emit
}  // namespace seatrt::gemma4
