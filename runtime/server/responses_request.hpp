// POST /v1/responses (OpenAI's Responses API, stateless as vLLM serves it)
// as the chat request it amounts to: `input` items become messages,
// `instructions` a system message first, function tools and `tool_choice`
// the chat forms, `text.format` a response_format, `reasoning.effort` the
// template's enable_thinking, `max_output_tokens` max_tokens.  The chat
// endpoint's own validation then applies unchanged, so a field means the
// same on both endpoints.
//
// Stateless: nothing is stored, so `previous_response_id`, `conversation`,
// `background` and stored `prompt` templates are refused (400 naming the
// field), as are hosted tools and non-text inputs (no vision).
#pragma once

#include <nlohmann/json.hpp>

namespace seatrt::server {

struct ResponsesTranslation {
  // A /v1/chat/completions body (with "model"), for parse_chat_request and
  // the chat template; key order as the client sent its parts.
  nlohmann::ordered_json chat_body;
  // The request's fields a Response object repeats (instructions, tools,
  // tool_choice, text, reasoning, max_output_tokens, temperature, top_p,
  // parallel_tool_calls, metadata, user, store, truncation), as sent or
  // their defaults.
  nlohmann::ordered_json echo;
};

// Throws bad_request (400) naming the field for anything malformed or not
// served.  `body` is the parsed request (an object is checked here).
ResponsesTranslation translate_responses_request(const nlohmann::ordered_json& body);

}  // namespace seatrt::server
