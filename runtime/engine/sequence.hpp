// One generation in the engine: its tokens, how many of them are in the KV
// cache, and the blocks holding them.  Owned by the engine thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "block_pool.hpp"

namespace seatrt::engine {

struct SamplingParams {
  float temperature = 1.0f;  // 0 = greedy
  float top_p = 1.0f;
  int32_t top_k = 0;
  float min_p = 0.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  float repetition_penalty = 1.0f;
  uint64_t seed = 0;        // the engine draws one from the OS when the request has none
  int32_t num_top_logprobs = 0;
};

// One generated token as the engine reports it.
struct TokenEvent {
  int32_t token = -1;
  float logprob = 0;
  std::vector<int32_t> top_ids;
  std::vector<float> top_logprobs;
};

enum class FinishReason { none, stop, length, cancelled, error };

struct FinishInfo {
  FinishReason reason = FinishReason::none;
  std::string error;  // for FinishReason::error: names the step and the problem
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  // FinishReason::stop by a stop_token_ids match: that token as sampled
  // (counted as generated, never fed to on_token); token -1 otherwise.
  TokenEvent stop_event;
};

// What a caller hands the engine.  The callbacks run on the engine thread
// and must be quick; on_token returns false to stop the sequence (a stop
// string was seen), which finishes it with FinishReason::stop.
struct GenerationRequest {
  std::vector<int32_t> prompt;
  int64_t max_new_tokens = 16;
  SamplingParams sampling;
  std::vector<int32_t> stop_token_ids;
  // Allowed-token mask for the next step (constrained decoding), or empty.
  std::function<std::vector<uint32_t>()> allowed_mask;
  std::function<bool(const TokenEvent&)> on_token;
  std::function<void(const FinishInfo&)> on_finish;
};

struct Sequence {
  int64_t id = 0;
  GenerationRequest request;
  std::vector<int32_t> tokens;  // prompt followed by generated tokens
  int64_t prompt_len = 0;
  int64_t num_computed = 0;      // tokens whose K/V is in the cache
  int64_t cached_prompt_tokens = 0;
  std::vector<BlockId> full_blocks;
  std::vector<BlockId> window_blocks;  // -1 where a block slid out of the window
  std::vector<uint64_t> block_hashes;  // chain hashes of the committed full blocks
  int32_t preemptions = 0;
  std::atomic<bool> cancelled{false};

  int64_t generated() const { return static_cast<int64_t>(tokens.size()) - prompt_len; }
};

using SequencePtr = std::shared_ptr<Sequence>;

}  // namespace seatrt::engine
