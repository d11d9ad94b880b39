// Runs a validated generation request and writes its response: one JSON
// body, or SSE chunks (with usage when asked) ending in [DONE].  Shared by
// /v1/chat/completions and /v1/completions.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "http_types.hpp"
#include "metrics.hpp"
#include "openai_request.hpp"
#include "parser_chain.hpp"
#include "seat_runtime.hpp"

namespace seatrt::server {

enum class Flavor { chat, completion, responses };

struct GenerationJob {
  Flavor flavor = Flavor::chat;
  std::string model;  // the served name the client used
  GenerationParams params;
  // One prompt, or several (completions): each gets params.n choices, in
  // order (choice index = prompt index * n + j, as OpenAI numbers them).
  std::vector<std::vector<int32_t>> prompts;
  std::optional<ParserRequestInfo> parser;
  // Flavor::responses: the request's fields the Response object repeats.
  nlohmann::ordered_json responses_echo;
  // Set when a drain's drain_timeout_s has passed: the generation ends with
  // a 503 (an error event when streaming) instead of being cut off.
  const std::atomic<bool>* drain_expired = nullptr;
};

// What one generation request did, for its access-log line (api.cpp).
struct GenerationRecord {
  std::string id;                     // the response's id ("chatcmpl-...")
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;      // over all choices
  int64_t cached_tokens = 0;          // prompt tokens served from the prefix cache
  std::vector<std::string> finish;    // per choice; empty when none finished
  bool stream = false;
  std::string error;                  // why a started generation failed
};

// Returns the HTTP status written.  Throws ApiError before anything is
// written (queue full: 429 with Retry-After is written here).  `record`
// (may be NULL) is filled as the request goes.
int serve_generation(const SeatRuntime& seat, Metrics& metrics, const GenerationJob& job, ResponseWriter& writer,
                     GenerationRecord* record = nullptr);

// A random id with `prefix` ("chatcmpl-"), from the OS random source.
std::string random_id(const std::string& prefix);

}  // namespace seatrt::server
