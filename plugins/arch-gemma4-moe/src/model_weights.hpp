// What a Gemma-4 step reads besides its inputs: the loaded weights and the
// activation workspaces, both owned by the Model and fixed for its life
// (so a planned step may keep pointing at them).
#pragma once

#include <vector>

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

struct ModelWeights {
  std::vector<LayerWeights> layers;
  seatrt_tensor embed{};  // the tied embedding: lm_head.data
  seatrt_linear_weight lm_head{};
  seatrt_tensor final_norm{};
};

// Activation buffers (F32 unless stated) of max_batch_tokens rows each;
// the MoE-only ones stay NULL on dense models.
struct Workspace {
  void *h, *x, *q, *k, *v, *attn, *branch, *mlp_gate, *mlp_up, *mlp_act, *rows;
  void *m1, *router_in, *router_logits, *router_ids /* I32 */, *router_weights, *expert_in, *expert_out;
};

}  // namespace seatrt::gemma4
