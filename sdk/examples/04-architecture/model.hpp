// The "tinydense" model: weights and workspaces on the provider's device,
// and one forward() per scheduler step, run as a graph (step_graph.cpp).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "seatrt/cpp/graph.hpp"
#include "seatrt/model.h"

namespace tinydense {

// Checkpoint tensor names (Llama/Qwen2 naming).
std::string layer_prefix(int32_t layer);
inline const char* kEmbedding = "model.embed_tokens";
inline const char* kFinalNorm = "model.norm.weight";

struct LayerWeights {
  seatrt_tensor input_norm, post_attention_norm;
  seatrt_tensor q_bias, k_bias, v_bias;
  const seatrt_linear_weight *q, *k, *v, *o, *gate, *up, *down;
};

// Everything a step graph reads besides the batch.  Workspaces hold
// max_batch_tokens rows; a step views the first num_tokens of them.
struct ModelParts {
  Config config;
  int32_t device_kind = 0;
  seatrt_tensor embedding;       // F32 [V, H]
  seatrt_tensor final_norm;      // F32 [H]
  seatrt_tensor inv_freq;        // F32 [head_dim / 2]
  const seatrt_linear_weight* lm_head = nullptr;  // tied: the embedding as a Linear
  std::vector<LayerWeights> layers;
  // Workspace bases (F32): the residual stream, the normed stream, q/k/v,
  // the attention output, the MLP's gate/up, and the rows picked for logits.
  float *residual, *normed, *q, *k, *v, *attn, *gate, *up, *picked;
};

// One step's graph, with the descriptors its nodes point at, and its plan.
struct Step {
  seatrt::sdk::GraphBuilder graph;
  std::deque<seatrt_kv_layer> caches;
  bool repeats = false;             // planned for many launches
  bool eager = false;               // no plan: run the nodes one by one
  seatrt_plan* plan = nullptr;
  seatrt_stream stream = nullptr;   // of the last launch
};

// Appends the step's nodes for `batch` to `step` (step_graph.cpp).
void build_step(const ModelParts& parts, const seatrt_forward_batch& batch, Step& step);

class Model {
 public:
  Model(const seatrt_model_source* src, Config config);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  static seatrt_model_info shape_info(const Config& c);
  static seatrt_kv_layer_spec kv_spec(const Config& c);
  const seatrt_model_info& info() const { return info_; }
  void forward(seatrt_stream stream, const seatrt_forward_batch& batch);
  // Plans (never launches) the step graphs of a decode step of 1 and of
  // max_seqs sequences and of a prefill chunk, reporting each (describe_steps.cpp).
  void describe_steps(int32_t max_seqs, const std::function<void(const std::string&)>& report);

 private:
  struct ShapeInputs;
  void make_inputs(int32_t seqs, int32_t tokens_per_seq, ShapeInputs& in);
  void describe_plan(Step& step, const std::function<void(const std::string&)>& report);
  void free_since(std::size_t count);
  void load_weights();
  void allocate_workspaces();
  float* allocate_f32(std::size_t count);
  seatrt_tensor load_tensor(const std::string& name);
  void launch(seatrt_stream stream, Step& step);
  void release_step(Step& step);

  const seatrt_model_source* src_;
  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  int64_t max_tokens_;
  ModelParts parts_;
  std::vector<void*> allocations_;
  std::vector<seatrt_kv_layer_spec> kv_specs_;
  seatrt_model_info info_{};
  // Plans of repeating steps (decode buckets), by shape and addresses.
  std::map<std::vector<int64_t>, std::unique_ptr<Step>> repeating_;
};

}  // namespace tinydense
