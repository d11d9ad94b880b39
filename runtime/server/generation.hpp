// One request's generation: n choices submitted to the engine, each turning
// token ids into text (streaming detokenizer, stop strings) and parsed
// output (reasoning, content, tool calls).  The engine thread produces
// events; the HTTP thread consumes them with next().  Cancelling (client
// gone) cancels every choice in the engine at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "openai_request.hpp"
#include "parser_chain.hpp"
#include "seat_runtime.hpp"

namespace seatrt::server {

// One token of a logprobs answer: `token` is its text as decoding it alone
// gives (valid UTF-8: a byte-fallback token that is not a whole character
// reads U+FFFD, as Hugging Face decodes it), `bytes` the raw bytes it
// stands for in the output (the chat API's "bytes", which a client joins
// across tokens).
struct LogprobToken {
  std::string token;  // as the client sees it: the text, or "token_id:N"
  std::string bytes;
  float logprob = 0;
  std::string text;   // the token's text (the legacy API's text_offset counts it)
  bool has_logprob = true;  // false: an echoed prompt's first token (null logprob, null top)
};

struct TokenLogprob : LogprobToken {
  std::vector<LogprobToken> top;
};

struct ChoiceEvent {
  int32_t index = 0;
  bool echo = false;  // the echoed prompt (completions' echo): no generated token
  // Set by an engine callback for work it leaves to the reader's thread
  // (next() runs it before returning the event): spelling prompt logprobs.
  std::function<void(ChoiceEvent&)> complete;
  ParsedDelta delta;
  std::vector<TokenLogprob> logprobs;
  bool finished = false;
  std::string finish_reason;  // "stop" | "length" | "tool_calls" (when finished without error)
  // What stopped it, for the response's stop_reason (vLLM's field): the
  // stop string that matched, or a stop token other than the tokenizer's
  // EOS (an end-of-turn id, a request's stop_token_ids); both unset: null.
  std::optional<std::string> stop_string;
  int32_t stop_token = -1;
  std::string error;          // non-empty: the choice failed (message for the client)
  bool non_finite = false;    // the failure was non-finite logits
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;  // so far (every event); the total when finished
  int64_t cached_tokens = 0;
};

class Generation {
 public:
  enum class Submit { ok, queue_full, draining };

  // params.n choices for each prompt, numbered prompt index * n + j.
  Generation(const SeatRuntime& seat, const GenerationParams& params, std::vector<std::vector<int32_t>> prompts,
             const ParserRequestInfo* parser_info);
  ~Generation();  // cancels whatever is still running

  // Submits the choices.  On queue_full/draining nothing stays queued.
  Submit start();
  // Waits up to `timeout` for the next event; nullopt on timeout.
  std::optional<ChoiceEvent> next(std::chrono::milliseconds timeout);
  bool all_finished() const;
  void cancel();

  std::chrono::steady_clock::time_point start_time() const { return start_time_; }

 private:
  struct Choice;
  void push(ChoiceEvent event);
  LogprobToken logprob_token(int32_t id, float logprob) const;
  TokenLogprob token_logprob(const engine::TokenEvent& e, int32_t top_n) const;
  // `text` before a stop string, with the stop string itself when the
  // request asked for it (include_stop_str_in_output) and one matched.
  std::string with_stop(std::string text, int stop_index) const;
  // The echoed prompt of a choice (its text; logprobs added by the caller).
  ChoiceEvent echo_event(const Choice& choice) const;

  const SeatRuntime& seat_;
  GenerationParams params_;
  std::vector<std::vector<int32_t>> prompts_;
  std::vector<std::unique_ptr<Choice>> choices_;
  std::vector<int64_t> engine_ids_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<ChoiceEvent> events_;
  int32_t finished_ = 0;
  std::chrono::steady_clock::time_point start_time_;
};

}  // namespace seatrt::server
