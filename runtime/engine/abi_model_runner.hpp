// ModelRunner over an architecture plugin (model.h) and a kernel provider
// (kernels.h): allocates each layer's paged KV cache from the plan (full
// layers indexed by the full pool's block ids, window layers by the window
// pool's), stages each step's inputs on the provider's device, calls
// forward() and copies the logits back.
#pragma once

#include <string>
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
  AbiModelRunner(const AbiModel& model, const KvPlan& plan, int64_t max_batch_tokens, int32_t max_seqs,
                 int64_t max_model_len);
  ~AbiModelRunner() override;

  int32_t vocab_size() const override { return model_.vocab_size; }
  void forward(const StepBatch& batch, std::vector<float>& logits) override;
  // Uses the kernel provider's sample op on the device logits when it has one.
  bool sample(std::span<const SampleInput> rows, std::vector<SampleResult>& out) override;

 private:
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
};

}  // namespace seatrt::engine
