// A small Gemma-4 MoE decoder as the graph the Gemma plugin emits: the
// same primitive nodes, names, order and tensor aliasing (the node sequence
// the Gemma plugin, the CUDA planner's pattern matching and this tool
// share), at small shapes: hidden 64, 4
// query heads of 16 over 2 KV heads, a dense MLP and 8 experts (top-2) both
// 32 wide, NVFP4 projections and experts, a BF16 router, paged BF16 caches
// of 16-token blocks.  The host side (weights, initial caches, each step's
// inputs) is drawn once from the case's generator, so both providers get
// the same model; the device side is one provider's copy of it.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cases.hpp"
#include "seatrt/cpp/graph.hpp"

namespace seatrt::conformance::gemma {

inline constexpr int64_t kHidden = 64, kQHeads = 4, kKvHeads = 2, kHeadDim = 16, kInter = 32, kExperts = 8,
                         kTopK = 2, kVocab = 128, kBlock = 16;

// One decoder layer: sliding (window > 0) or full; k_eq_v layers have no
// v_proj and a cache without v_cache.
struct LayerSpec {
  int32_t window;
  bool k_eq_v;
  float layer_scalar;
};

struct HostLayer {
  test::Nvfp4Weight q, k, v, o, gate, up, down;  // v unused when k_eq_v
  std::vector<test::Nvfp4Weight> expert_gate, expert_up, expert_down;
  test::DenseWeight router;
  test::Tensor input_norm, q_norm, k_norm, post_attn, pre_ff, post_ff_1, router_in, pre_ff_2, post_ff_2, post_ff;
  test::Tensor per_expert_scale, inv_freq;
  test::Tensor k_cache, v_cache;  // contents before the first step
};

struct HostModel {
  std::vector<LayerSpec> specs;
  std::vector<HostLayer> layers;
  test::Tensor embed, final_norm;
  test::DenseWeight lm_head;
  int64_t num_blocks = 0;
};

// The graph's input tensors for one launch.
struct StepInputs {
  test::Tensor token_ids, positions, slots, query_start, seq_lens, block_tables, logits_index;
};

// Sequences of one graph: tokens already cached and new rows, per step.
struct StepPlan {
  std::vector<std::vector<int64_t>> cached, rows;  // [step][seq]
};

HostModel make_host_model(std::mt19937& rng, const std::vector<LayerSpec>& specs, int64_t num_blocks);
// Block tables drawn once (every sequence owns the blocks its longest step
// needs), then each step's positions, slots and lengths.
std::vector<StepInputs> make_steps(std::mt19937& rng, const StepPlan& plan, int64_t num_blocks);
// Blocks a plan needs in all, with a few spare ones no sequence owns.
int64_t blocks_needed(const StepPlan& plan);

// One provider's copy of the model, its caches, workspaces and inputs.
class DeviceModel {
 public:
  DeviceModel(Provider& p, const HostModel& host, const StepInputs& first);
  ~DeviceModel();
  DeviceModel(const DeviceModel&) = delete;
  DeviceModel& operator=(const DeviceModel&) = delete;

  // Rewrites the graph's inputs (same shapes) for the next launch.
  void set_inputs(const StepInputs& in);
  // Appends the whole step: embed, every layer, the head.
  void build(sdk::GraphBuilder& b);
  // Everything the step leaves behind: h, x, logits, and per layer the
  // router's ids (exact) and weights and the caches.
  Outputs read_outputs();

 private:
  struct Layer;
  seatrt_tensor* view(sdk::GraphBuilder& b, DeviceTensor& t, std::vector<int64_t> shape);
  void build_attention(sdk::GraphBuilder& b, size_t l);
  void build_ffn(sdk::GraphBuilder& b, size_t l);

  Provider& p_;
  const HostModel& host_;
  int64_t tokens_, seqs_, outs_;
  int32_t max_query_len_ = 0, max_seq_len_ = 0;
  std::vector<std::unique_ptr<Layer>> layers_;
  DeviceTensor embed_, final_norm_;
  std::unique_ptr<DeviceWeight> lm_head_;
  DeviceTensor token_ids_, positions_, slots_, query_start_, seq_lens_, block_tables_, logits_index_;
  DeviceTensor h_, x_, q_, k_, v_, attn_, branch_, gate_, up_, act_, m1_, r_, ein_, router_logits_, eout_, rows_,
      logits_;
};

}  // namespace seatrt::conformance::gemma
