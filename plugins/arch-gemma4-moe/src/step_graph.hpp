// One forward step of the Gemma-4 decoder as a graph of primitive nodes:
// embed, then per layer attention, dense MLP, (experts,) layer end; then
// the head.  The node order and names are a contract with the providers'
// planners, which recognise these exact sequences (the same tensors, in
// place where written) and run them as their fused kernels.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "gemma4_config.hpp"
#include "model_weights.hpp"
#include "seatrt/cpp/graph.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::gemma4 {

// A built step: the nodes (and every descriptor they point at) and the
// copies of the batch's KV layers, all at stable addresses.
struct StepGraph {
  sdk::GraphBuilder nodes;
  std::deque<seatrt_kv_layer> caches;
  std::string name;  // "decode t=1 s=1", "prefill t=42 s=1"
};

// What build_step_graph reads of the model.
struct StepModel {
  const Config& config;
  const ModelWeights& weights;
  const Workspace& ws;
  int32_t device_kind;
};

// The step for `batch` (its tensors and KV layers copied into the graph;
// the memory they point at is read when the graph runs).
std::unique_ptr<StepGraph> build_step_graph(const StepModel& m, const seatrt_forward_batch& batch);

// The stage a node belongs to, from its name ("3/experts/router" ->
// "experts"): for `seatrt check`'s summary.
std::string node_stage(const std::string& node_name);

}  // namespace seatrt::gemma4
