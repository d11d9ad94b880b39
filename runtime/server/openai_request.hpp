// Strict parsing of the OpenAI request bodies this server accepts.  Every
// problem is an ApiError(400) naming the field and the expected type; an
// unknown field is an error too (typos must not be silently ignored).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/sequence.hpp"

namespace seatrt::server {

struct GenerationParams {
  std::string model;
  std::optional<int64_t> max_tokens;
  engine::SamplingParams sampling;
  bool seeded = false;
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;
  int32_t n = 1;
  bool logprobs = false;
  int32_t top_logprobs = 0;
  bool stream = false;
  bool include_usage = false;
  bool continuous_usage = false;  // with include_usage: usage so far on every chunk (vLLM)
  bool skip_special_tokens = true;
  bool tokens_as_ids = false;     // return_tokens_as_token_ids (vLLM): logprob tokens as "token_id:N"
  // Completions' echo: the prompt comes first in each choice's text (and,
  // with logprobs, its tokens first in the logprobs, the first with null).
  bool echo = false;
  std::vector<std::string> echo_texts;  // set by the endpoint: each prompt as the client sent it
  // Completions' echo with logprobs scores the prompt's tokens; chat's echo
  // (vLLM) is text only.
  bool echo_scores_prompt = true;
  // vLLM's extensions, for clients and benchmark tools written for it.
  bool ignore_eos = false;          // the seat's end tokens do not stop the output
  int64_t min_tokens = 0;           // no stop token (end or stop_token_ids) before this many
  std::vector<int32_t> allowed_token_ids;  // non-empty: only these are sampled
  bool include_stop_str = false;    // include_stop_str_in_output: the matched stop string stays
  std::optional<int64_t> truncate_prompt_tokens;  // keep the prompt's last N tokens (-1: max_model_len)
};

struct ChatRequest {
  GenerationParams gen;
  nlohmann::json messages;              // validated: text content only
  nlohmann::json tools;                 // array or null
  nlohmann::json tool_choice;           // "auto" | "none" | "required" | object | null
  nlohmann::json response_format;       // object or null
  nlohmann::json chat_template_kwargs;  // object (may be empty)
  bool add_generation_prompt = true;
  bool continue_final_message = false;  // vLLM: the prompt ends inside the final message (chat_continuation.hpp)
  bool echo = false;  // vLLM: the answer starts with the final message's text (chat_echo_text)
  bool parallel_tool_calls = true;      // false: at most one tool call
};

struct CompletionRequest {
  GenerationParams gen;
  // One or more prompts (OpenAI: a string, an array of strings, an array
  // of token ids, or an array of such arrays), each text or token ids.
  struct Prompt {
    std::optional<std::string> text;
    std::vector<int32_t> ids;
  };
  std::vector<Prompt> prompts;
};

// Deepest nesting of arrays/objects a request body may have.
inline constexpr size_t kMaxJsonDepth = 64;

// Parses a request body; throws bad_request (400) for invalid JSON, a number
// out of range or nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_body(const std::string& body);

// A JSON integer as a token id; bad_request naming `field` when it does not
// fit an int32 (the vocabulary check comes after).
int32_t token_id_of(const nlohmann::json& t, const std::string& field);

// Parses a body; throws ApiError (400) with the field named.
ChatRequest parse_chat_request(const nlohmann::json& body);
CompletionRequest parse_completion_request(const nlohmann::json& body);

}  // namespace seatrt::server
