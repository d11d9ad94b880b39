// A minimal single-sequence driver over a loaded model: one KV cache of
// fp32 blocks (block_size 16) for each layer, prefill then token-by-token
// decode through forward().  Used by `seatrt eval` and the parity tests; the
// server's engine has its own paged pool and scheduler.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "seatrt/model/model_loader.hpp"

namespace seatrt::model {

class SequenceDriver {
 public:
  static constexpr int32_t kBlockSize = 16;

  // Allocates the cache for up to `max_tokens` positions.
  SequenceDriver(const LoadedModel& model, int32_t max_tokens);
  ~SequenceDriver();
  SequenceDriver(const SequenceDriver&) = delete;
  SequenceDriver& operator=(const SequenceDriver&) = delete;

  // Feeds `tokens` at the next positions.  Returns the logits of every fed
  // token ([n, vocab] row-major) when all_rows, else of the last one only.
  std::vector<float> step(std::span<const int32_t> tokens, bool all_rows);

  int32_t length() const { return length_; }
  int32_t vocab_size() const { return model_.info().vocab_size; }

 private:
  void* device_alloc(std::size_t bytes);
  void upload(void* device, const void* host, std::size_t bytes);

  const LoadedModel& model_;
  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  seatrt_stream stream_ = nullptr;
  int32_t max_tokens_;
  int32_t num_blocks_;
  int32_t length_ = 0;
  std::vector<seatrt_kv_layer> kv_layers_;
  std::vector<void*> allocations_;
};

// Index of the largest value; the lowest index on ties.
int32_t argmax(std::span<const float> row);

struct EvalResult {
  std::vector<float> prompt_logits;  // [prompt length, vocab]
  std::vector<int32_t> greedy;       // the greedy continuation
};

// Prefills `prompt` (logits for every position), then decodes
// `greedy_tokens` tokens one at a time, each the argmax of the last logits.
EvalResult run_greedy(const LoadedModel& model, std::span<const int32_t> prompt, int32_t greedy_tokens);

}  // namespace seatrt::model
