// The requests `seatrt bench` sends and what it measures of each: prompts
// made unique from the OS random source (so the prefix cache is never what
// gets measured), one streaming completion timed token by token, and the
// percentiles the report uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/http_client.hpp"

namespace seatrt::cli::bench {

struct RequestResult {
  bool ok = false;
  std::string error;
  double ttft = 0;          // seconds to the first token's event
  std::vector<double> itl;  // seconds between successive token events
  int64_t tokens = 0;       // completion tokens (usage)
  int64_t prompt_tokens = 0;
  double duration = 0;      // seconds, request sent to [DONE]
};

// Nearest-rank percentile, p in [0, 1]; 0 for an empty list.
double percentile(std::vector<double> v, double p);

// A text prompt of about `tokens` tokens that starts with an OS-random
// nonce, trimmed with the server's tokenizer (/tokenize).
std::string unique_text_prompt(const server::HttpClient& client, const std::string& model, int tokens);

// Token ids the served tokenizer produces for ordinary text (from /tokenize),
// to draw id prompts from.  Throws when the server cannot tokenize.
std::vector<int32_t> token_pool(const server::HttpClient& client, const std::string& model);

// A prompt of exactly `tokens` ids, each drawn from `pool` by the OS random
// source: unique for every call, exact in length for any tokenizer.
nlohmann::json random_id_prompt(const std::vector<int32_t>& pool, int tokens);

// One streaming /v1/completions request at `temperature` (0 = greedy);
// never throws for HTTP or stream errors (they land in RequestResult::error).
RequestResult run_completion(const server::HttpClient& client, const std::string& model,
                             const nlohmann::json& prompt, int max_tokens, double temperature);

}  // namespace seatrt::cli::bench
