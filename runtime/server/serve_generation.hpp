// Runs a validated generation request and writes its response: one JSON
// body, or SSE chunks (with usage when asked) ending in [DONE].  Shared by
// /v1/chat/completions and /v1/completions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "http_types.hpp"
#include "metrics.hpp"
#include "openai_request.hpp"
#include "parser_chain.hpp"
#include "seat_runtime.hpp"

namespace seatrt::server {

enum class Flavor { chat, completion };

struct GenerationJob {
  Flavor flavor = Flavor::chat;
  std::string model;  // the served name the client used
  GenerationParams params;
  std::vector<int32_t> prompt;
  std::optional<ParserRequestInfo> parser;
};

// Returns the HTTP status written.  Throws ApiError before anything is
// written (queue full: 429 with Retry-After is written here).
int serve_generation(const SeatRuntime& seat, Metrics& metrics, const GenerationJob& job, ResponseWriter& writer);

// A random id with `prefix` ("chatcmpl-"), from the OS random source.
std::string random_id(const std::string& prefix);

}  // namespace seatrt::server
