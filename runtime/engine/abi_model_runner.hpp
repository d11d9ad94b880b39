// ModelRunner over an architecture plugin (model.h) and a kernel provider
// (kernels.h): allocates each layer's paged KV cache from the plan (full
// layers indexed by the full pool's block ids, window layers by the window
// pool's), stages each step's inputs on the provider's device, calls
// forward() and copies the logits back, or samples on the device.  Decode
// steps are padded to repeating shapes (one per batch size and power-of-two
// block-table width) at fixed addresses and marked shape_repeats, so the
// architecture can plan each such step once and launch the plan again.
#pragma once

#include <atomic>
#include <set>
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
  // repeat_decode: pad decode-only steps to repeating shapes and mark them
  // shape_repeats (the seat's [kernels] graphs).
  AbiModelRunner(const AbiModel& model, const KvPlan& plan, int64_t max_batch_tokens, int32_t max_seqs,
                 int64_t max_model_len, bool repeat_decode = false);
  ~AbiModelRunner() override;

  int32_t vocab_size() const override { return model_.vocab_size; }
  void forward(const StepBatch& batch, std::vector<float>& logits) override;
  // Uses the kernel table's sample op on the device logits when it
  // supports one.
  bool sample(std::span<const SampleInput> rows, std::vector<SampleResult>& out) override;
  // The host sampler honours a bias; a provider's sample op when it
  // supports a sample op whose row carries one.
  bool supports_logit_bias() const override;
  // Whether tokens are sampled by the kernel table (else the host sampler).
  bool provider_samples() const { return provider_samples_; }
  // Steps run with shape_repeats = 1 so far (for tests and logs).
  int64_t repeating_steps() const { return repeating_steps_; }
  // Distinct repeating shapes seen so far.
  int64_t repeating_shapes() const { return static_cast<int64_t>(repeating_shapes_.size()); }
  // Block-table columns the staging buffers hold (max_model_len's blocks + 1).
  int64_t max_blocks() const { return max_blocks_; }

 private:
  // Asks the kernel table whether it samples rows like these (a neutral
  // row, with a one-entry bias when `with_bias`).
  bool table_samples(bool with_bias) const;
  // Whether a decode step of key (sequences, width) may be marked as
  // repeating: the model keeps a plan per shape, so their count is capped.
  bool repeats(std::pair<int32_t, int64_t> key);
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
  // The descriptors of the last step's inputs (the forward batch points at
  // them): fixed addresses, so a repeating step repeats them too.
  struct StepTensors {
    seatrt_tensor token_ids, positions, query_start, seq_lens, block_tables, slot_mapping, window_block_tables,
        window_slot_mapping, logits_index, logits_t;
  } step_{};
  bool repeat_decode_ = false;
  bool provider_samples_ = false;
  bool provider_bias_ = false;
  std::atomic<int64_t> repeating_steps_{0};
  std::set<std::pair<int32_t, int64_t>> repeating_shapes_;  // (sequences, block-table width)
};

}  // namespace seatrt::engine
