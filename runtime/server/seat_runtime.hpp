// Everything the HTTP layer serves one seat with: the engine, the text
// boundary (tokenizer, chat template), the parser plugins, served names and
// the facts /v1/seat reports.  Built by `seatrt serve` from the seat file
// (or by a test harness); the server only reads it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.hpp"
#include "seatrt/parser.h"
#include "seatrt/text/tokenizer.hpp"

namespace seatrt::server {

// A parser plugin table and the seat's options for it.
struct ParserPlugin {
  const seatrt_parser_api* api = nullptr;
  std::string options_toml;
  std::string name;  // the plugin's, for error messages
};

// Renders the chat prompt: messages, tools (null when left out), the
// effective template kwargs, whether to open the assistant turn.
// JSON keeps the client's key order (tool schemas render as sent).
using ChatRenderer =
    std::function<std::string(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                              const nlohmann::ordered_json& kwargs, bool add_generation_prompt)>;

struct SeatRuntime {
  std::string seat_name;
  std::vector<std::string> served_names;  // [0] primary, then aliases
  int64_t max_model_len = 0;
  // The longest text one token stands for, in bytes (from the vocabulary):
  // a prompt longer than max_model_len tokens of it is refused untokenized.
  int64_t max_token_bytes = 1;
  std::shared_ptr<const text::Tokenizer> tokenizer;
  ChatRenderer render_chat;
  nlohmann::json default_chat_template_kwargs = nlohmann::json::object();
  bool exclude_tools_when_tool_choice_none = false;
  ParserPlugin tool_parser;       // api NULL: none
  ParserPlugin reasoning_parser;  // api NULL: none; same api as tool_parser: one instance
  std::vector<int32_t> end_token_ids;  // generation stops at these (never shown)
  std::shared_ptr<engine::Engine> engine;
  std::string kernel_provider;  // the provider's plugin name, for refusals that depend on it
  nlohmann::json seat_info = nlohmann::json::object();  // reported by GET /v1/seat
  std::optional<std::string> api_key;  // absent: no authentication
  std::string host = "127.0.0.1";
  int port = 8000;
  double drain_timeout_s = 30.0;
  double request_timeout_s = 600.0;  // a generation running longer is cancelled
  int64_t max_queue = 256;           // server.max_queue: waiting requests (each of n choices is one)
  int64_t max_connections = 1024;    // HttpServer::Limits
  double idle_timeout_s = 60.0;
  int retry_after_s = 1;
};

}  // namespace seatrt::server
