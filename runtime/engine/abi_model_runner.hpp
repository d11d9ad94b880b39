// ModelRunner over an architecture plugin (model.h) and a kernel provider
// (kernels.h): allocates each layer's paged KV cache from the plan (full
// layers indexed by the full pool's block ids, window layers by the window
// pool's), stages each step's inputs on the provider's device, calls
// forward() and copies the logits back, or samples on the device.  Decode
// steps are captured as graphs of the provider (one per batch size and
// block-table width) and replayed, when it has graph capture.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kv_plan.hpp"
#include "model_runner.hpp"
#include "seatrt/model.h"

namespace seatrt::engine {

struct AbiModel {
  const seatrt_host_api* host = nullptr;  // to read and free statuses
  const seatrt_arch_api* arch = nullptr;
  seatrt_model* model = nullptr;
  const seatrt_kernel_api* kernels = nullptr;
  seatrt_kernel_context* context = nullptr;
  int32_t vocab_size = 0;
  std::vector<KvLayerSpec> layers;
};

class AbiModelRunner : public ModelRunner {
 public:
  // Allocates the KV pool (plan.pool_bytes) and staging buffers for steps of
  // up to max_batch_tokens tokens and max_seqs sequences.
  // decode_graphs: replay decode-only steps from captured graphs when the
  // provider has graph_begin/end/launch (the seat's [kernels] graphs).
  AbiModelRunner(const AbiModel& model, const KvPlan& plan, int64_t max_batch_tokens, int32_t max_seqs,
                 int64_t max_model_len, bool decode_graphs = false);
  ~AbiModelRunner() override;

  int32_t vocab_size() const override { return model_.vocab_size; }
  void forward(const StepBatch& batch, std::vector<float>& logits) override;
  // Uses the kernel provider's sample op on the device logits when it has one.
  bool sample(std::span<const SampleInput> rows, std::vector<SampleResult>& out) override;
  // The host sampler's, or the provider's SEATRT_SAMPLE_LOGIT_BIAS (ABI 1.7).
  bool supports_logit_bias() const override;
  // Decode steps replayed from captured graphs so far (for tests and logs).
  int64_t graph_replays() const { return graph_replays_; }
  // Block-table columns the staging buffers hold (max_model_len's blocks + 1).
  int64_t max_blocks() const { return max_blocks_; }
  // Why graph capture was turned off at run time, or empty.
  const std::string& graphs_off_reason() const { return graphs_off_reason_; }

 private:
  bool provider_samples() const;
  // Runs the architecture's forward over `fb`: eagerly, or from the graph
  // kept for `key` (captured on the second step with that key, after an
  // eager one has sized the provider's scratch memory).
  void run_forward(const seatrt_forward_batch& fb, bool graph, std::pair<int32_t, int64_t> key);
  void* alloc(size_t bytes);
  void upload(void* dst, const void* src, size_t bytes);
  void check(seatrt_status* status, const char* what);

  AbiModel model_;
  KvPlan plan_;
  seatrt_stream stream_ = nullptr;
  std::vector<void*> allocations_;
  std::vector<seatrt_kv_layer> kv_layers_;
  // Staging buffers on the device.
  void* token_ids_ = nullptr;
  void* positions_ = nullptr;
  void* query_start_ = nullptr;
  void* seq_lens_ = nullptr;
  void* block_tables_ = nullptr;
  void* slot_mapping_ = nullptr;
  void* window_block_tables_ = nullptr;
  void* window_slot_mapping_ = nullptr;
  void* logits_index_ = nullptr;
  void* logits_ = nullptr;
  int64_t max_tokens_ = 0;
  int32_t max_seqs_ = 0;
  int32_t last_num_logits_ = 0;
  int64_t max_blocks_ = 0;
  struct DecodeGraph {
    bool warmed = false;  // one eager step ran with this key
    seatrt_graph* graph = nullptr;
  };
  bool graphs_enabled_ = false;
  std::atomic<int64_t> graph_replays_{0};
  std::string graphs_off_reason_;
  // Frees `status` and turns graphs off, keeping its message.
  void graphs_off(seatrt_status* status, const char* what);
  std::map<std::pair<int32_t, int64_t>, DecodeGraph> graphs_;  // (sequences, block-table width)
};

}  // namespace seatrt::engine
