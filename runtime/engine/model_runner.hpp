// What the engine needs from a model: one forward step over a batch built
// from the scheduler's plan, returning fp32 logits on the host for the rows
// that need them.  AbiModelRunner implements it over an architecture
// plugin; tests may implement it directly.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "host_sampler.hpp"

namespace seatrt::engine {

// One step's inputs, host side (the layout of seatrt_forward_batch).
struct StepBatch {
  int32_t num_seqs = 0;
  int32_t max_query_len = 0;
  int32_t max_seq_len = 0;
  int32_t max_blocks = 0;  // columns of the block tables
  std::vector<int32_t> token_ids;     // [T]
  std::vector<int32_t> positions;     // [T]
  std::vector<int32_t> query_start;   // [S+1]
  std::vector<int32_t> seq_lens;      // [S]
  std::vector<int32_t> block_tables;  // [S, max_blocks], -1 padded (full layers)
  std::vector<int64_t> slot_mapping;  // [T]
  std::vector<int32_t> window_block_tables;  // [S, max_blocks] (window layers), empty if none
  std::vector<int64_t> window_slot_mapping;  // [T], empty if none
  std::vector<int32_t> logits_index;  // rows of T that need logits
  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual int32_t vocab_size() const = 0;
  // Fills `logits` with logits_index.size() rows of vocab_size() floats, or
  // leaves it empty when the logits stay on the device for sample().
  // Throws std::runtime_error naming the failure.
  virtual void forward(const StepBatch& batch, std::vector<float>& logits) = 0;
  // Samples one token for each logits row of the last forward() (rows[i]
  // describes row i; its `logits` span is the host copy) on the model's own
  // device.  Returns false when it cannot (the engine then samples on the
  // host with the same rule).  Throws std::runtime_error naming a failure.
  virtual bool sample(std::span<const SampleInput> rows, std::vector<SampleResult>& out) {
    (void)rows;
    (void)out;
    return false;
  }
  // Whether sampling honours SamplingParams' logit bias.  The host sampler
  // does; a runner whose sample() cannot says false, and requests with a
  // bias are then refused before they reach the engine.
  virtual bool supports_logit_bias() const { return true; }
};

}  // namespace seatrt::engine
