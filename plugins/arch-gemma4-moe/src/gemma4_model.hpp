// The Gemma-4 text decoder built from a model source: weights loaded
// through the source, workspaces from the kernel provider, and forward()
// expressed entirely in kernel-table operations.
#pragma once

#include <memory>
#include <vector>

#include "gemma4_config.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::gemma4 {

struct LayerWeights {
  const seatrt_linear_weight* q_proj = nullptr;
  const seatrt_linear_weight* k_proj = nullptr;
  const seatrt_linear_weight* v_proj = nullptr;  // nullptr on k_eq_v layers
  const seatrt_linear_weight* o_proj = nullptr;
  const seatrt_linear_weight* gate_proj = nullptr;
  const seatrt_linear_weight* up_proj = nullptr;
  const seatrt_linear_weight* down_proj = nullptr;
  const seatrt_linear_weight* router_proj = nullptr;  // MoE: &router_dense
  seatrt_linear_weight router_dense{};  // read as stored (BF16 kept), see load_dense_weight
  bool router_prepared = false;
  seatrt_tensor input_norm{}, post_attention_norm{}, pre_ff_norm{}, post_ff_norm{};
  seatrt_tensor q_norm{}, k_norm{};
  seatrt_tensor post_ff_norm_1{}, pre_ff_norm_2{}, post_ff_norm_2{};  // MoE only
  seatrt_tensor router_input_weight{};  // MoE: router.scale * hidden^-1/2, folded at load
  seatrt_tensor per_expert_scale{};     // MoE only
  float layer_scalar = 1.0f;
  seatrt_tensor inv_freq{};  // F32 [head_dim / 2], on the device
  // Expert weights as contiguous arrays for the moe op.
  std::vector<seatrt_linear_weight> expert_gate, expert_up, expert_down;
};

class Model {
 public:
  // Checks the checkpoint (inspect), loads every weight, allocates the
  // workspaces for src->max_batch_tokens tokens.
  Model(const seatrt_model_source* src, Config config);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const seatrt_model_info& info() const { return info_; }
  // What info() reports that follows from the config alone (kv_layers NULL,
  // byte counts 0), and the per-layer KV cache specs (info().kv_layers):
  // plugin.cpp's describe() reports both before any model exists.
  static seatrt_model_info shape_info(const Config& c);
  static std::vector<seatrt_kv_layer_spec> kv_specs(const Config& c);
  void forward(seatrt_stream stream, const seatrt_forward_batch& batch);
  void set_trace(seatrt_trace_fn fn, void* user) {
    trace_ = fn;
    trace_user_ = user;
  }

 private:
  void* allocate(std::size_t bytes);
  seatrt_tensor load_plain(const std::string& name, int32_t dtype = SEATRT_DTYPE_F32);
  bool load_dense_weight(const std::string& name, int64_t out_features, int64_t in_features,
                         seatrt_linear_weight& w);
  void load_embedding();
  float read_scalar(const std::string& name) const;
  void load_layer(int32_t index);
  seatrt_tensor fold_router_scale(const seatrt_tensor& router_scale);

  const seatrt_model_source* src_;
  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  Config c_;
  int64_t max_tokens_;
  std::vector<LayerWeights> layers_;
  seatrt_tensor embed_{};
  seatrt_linear_weight lm_head_{};
  bool lm_head_prepared_ = false;
  seatrt_tensor final_norm_{};
  std::vector<seatrt_kv_layer_spec> kv_specs_;
  seatrt_model_info info_{};

  // Workspaces (F32 unless stated), sized for max_tokens_ rows.
  struct Workspace {
    void *h, *x, *q, *k, *v, *attn, *branch, *mlp_gate, *mlp_up, *mlp_act, *m1, *router_in, *router_logits,
        *router_ids, *router_weights, *expert_in, *expert_out, *rows;
  } ws_{};
  std::vector<void*> allocations_;
  // MoE models on a provider with stream_wait (ABI 1.3): the stream that q's
  // norm and RoPE, and the router and experts, run on beside the caller's
  // stream (forward forks to it and joins back twice per layer).  Owned;
  // NULL otherwise.
  seatrt_stream side_ = nullptr;
  seatrt_trace_fn trace_ = nullptr;
  void* trace_user_ = nullptr;
};

}  // namespace seatrt::gemma4
