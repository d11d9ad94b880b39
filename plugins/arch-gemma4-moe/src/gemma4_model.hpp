// The Gemma-4 text decoder built from a model source: weights loaded
// through the source, workspaces from the kernel provider, and each
// forward step a graph of kernel-table operations (step_graph.hpp) run by
// a StepRunner.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gemma4_config.hpp"
#include "model_weights.hpp"
#include "seatrt/seatrt.h"
#include "step_runner.hpp"

namespace seatrt::gemma4 {

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

  // model_steps.cpp: one step, and `seatrt check`'s report of the step graphs.
  void forward(seatrt_stream stream, const seatrt_forward_batch& batch);
  void describe_steps(int32_t max_seqs, const std::function<void(const std::string&)>& report);
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
  uint64_t allocate_workspaces();
  StepModel step_model() const { return StepModel{c_, w_, ws_, k_->device_kind}; }

  const seatrt_model_source* src_;
  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  Config c_;
  int64_t max_tokens_;
  ModelWeights w_;
  bool lm_head_prepared_ = false;
  std::vector<seatrt_kv_layer_spec> kv_specs_;
  seatrt_model_info info_{};
  Workspace ws_{};
  std::vector<void*> allocations_;
  StepRunner runner_;
  seatrt_trace_fn trace_ = nullptr;
  void* trace_user_ = nullptr;
};

}  // namespace seatrt::gemma4
