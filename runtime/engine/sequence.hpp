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
#include "callback_offload.hpp"

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
  // OpenAI logit_bias: bias_values[i] is added to the logit of bias_ids[i]
  // before the penalties.  Ids distinct and ascending; values finite.
  std::vector<int32_t> bias_ids;
  std::vector<float> bias_values;
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

// What a caller hands the engine.  The callbacks run on the engine thread,
// one at a time; a sequence whose on_token proves slow has its later
// on_token/allowed_mask calls run on a pool thread instead (still one at a
// time, in order: callback_offload.hpp), so it delays only itself.
// on_token returns false to stop the sequence (a stop string was seen),
// which finishes it with FinishReason::stop.
struct GenerationRequest {
  std::vector<int32_t> prompt;
  int64_t max_new_tokens = 16;
  SamplingParams sampling;
  std::vector<int32_t> stop_token_ids;
  // Allowed-token mask for the next step (constrained decoding), or empty.
  std::function<std::vector<uint32_t>()> allowed_mask;
  std::function<bool(const TokenEvent&)> on_token;
  std::function<void(const FinishInfo&)> on_finish;
  // Prompt logprobs (the legacy API's echo): -1 off; k >= 0 scores every
  // prompt token after the first, with k top alternatives, from the raw
  // logits of the position before it.  The prompt is then computed in full
  // (no prefix cache) and on_prompt_logprobs gets the prompt_len - 1
  // events (event i: prompt token i + 1) once, before the first on_token.
  int32_t prompt_logprobs = -1;
  std::function<void(std::vector<TokenEvent>)> on_prompt_logprobs;
  // vLLM's min_tokens: until this many tokens are generated, the stop
  // tokens are masked out.  allowed_token_ids: when non-empty, the only
  // tokens that may be sampled.  Both narrow the parser's mask, if any.
  int64_t min_tokens = 0;
  std::vector<int32_t> allowed_token_ids;
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
  bool finished = false;  // finish() ran: later rows of its last step are ignored
  std::vector<TokenEvent> prompt_events;  // scored prompt tokens so far (prompt_logprobs)
  bool prompt_events_sent = false;
  // Slow output callbacks (callback_offload.hpp): once on_token took longer
  // than EngineConfig::slow_callback_s, later ones run on the offload pool.
  // `pending` is set while one runs (the scheduler skips the sequence); the
  // next mask it computed waits in `next_mask`; a finish asked for meanwhile
  // waits in `deferred_finish` (the parser is never used by two threads).
  bool slow_callbacks = false;
  std::shared_ptr<PendingCallback> pending;
  std::optional<std::vector<uint32_t>> next_mask;
  struct DeferredFinish {
    FinishReason reason = FinishReason::none;
    std::string error;
    TokenEvent stop_event;
  };
  std::optional<DeferredFinish> deferred_finish;
  // Whether the next chunk must have logits at every position (prompt
  // tokens still to be scored).
  bool wants_prompt_logits() const {
    return request.prompt_logprobs >= 0 && !prompt_events_sent &&
           static_cast<int64_t>(prompt_events.size()) < prompt_len - 1;
  }

  int64_t generated() const { return static_cast<int64_t>(tokens.size()) - prompt_len; }
};

using SequencePtr = std::shared_ptr<Sequence>;

}  // namespace seatrt::engine
