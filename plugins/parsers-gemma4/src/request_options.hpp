// What one request asks of the parser, read from seatrt_parser_request.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar.hpp"
#include "seatrt/parser.h"

namespace seatrt::parsers::gemma4 {

enum class ToolChoice { kAuto, kNone, kRequired, kNamed };
enum class ResponseFormat { kText, kJsonObject, kJsonSchema };

struct RequestOptions {
  ToolChoice tool_choice = ToolChoice::kAuto;
  std::string named_function;              // kNamed
  nlohmann::json tools = nlohmann::json::array();
  std::vector<std::string> tool_names;     // in declaration order
  ResponseFormat format = ResponseFormat::kText;
  nlohmann::json format_schema;            // kJsonSchema
  bool enable_thinking = false;            // chat_template_kwargs.enable_thinking
  bool prompt_in_channel = false;          // the prompt ends inside an open <|channel>
  bool prompt_wrote_label = false;         // ... after which the prompt already wrote text
  GrammarLimits limits;                    // from the seat's options
  bool parallel_calls = true;              // false: at most one call (parallel_tool_calls)
};

// Reads the request (and the seat's options TOML).  Throws
// std::invalid_argument with a message fit for the client when the request
// is impossible (bad JSON, a named tool_choice naming no declared tool, ...).
RequestOptions read_request(std::string_view options_toml, const seatrt_parser_request& request);

// Scans the end of the rendered prompt: true when its last control token is
// an opening <|channel>; `wrote_label` tells whether text follows it.
bool prompt_ends_in_channel(std::string_view prompt_tail, bool* wrote_label);

}  // namespace seatrt::parsers::gemma4
