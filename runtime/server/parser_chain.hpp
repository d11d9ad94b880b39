// The per-request parser instances of a seat (parser.h): a reasoning parser
// fed first, its content fed as text to the tool parser; one instance when a
// plugin serves both kinds.  Without parsers, all text is content.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "seat_runtime.hpp"

namespace seatrt::server {

// What parsing one choice produced so far (and, per feed, the new parts).
struct ToolCallDelta {
  int32_t index = 0;
  std::string id;
  std::string name;
  std::string arguments;
};

struct ParsedDelta {
  std::string content;
  std::string reasoning;
  std::vector<ToolCallDelta> tool_calls;
  bool empty() const { return content.empty() && reasoning.empty() && tool_calls.empty(); }
};

struct ParserRequestInfo {
  std::string request_id;
  std::string tools_json;
  std::string tool_choice_json;
  std::string response_format_json;
  std::string chat_template_kwargs_json;
  std::string prompt_tail;
  bool parallel_tool_calls = true;  // false: the request allows one call
};

class ParserChain {
 public:
  // Throws ApiError(400) with the plugin's message when it refuses the request.
  ParserChain(const SeatRuntime& seat, const ParserRequestInfo& info);
  ~ParserChain();
  ParserChain(const ParserChain&) = delete;
  ParserChain& operator=(const ParserChain&) = delete;

  ParsedDelta feed(const std::vector<int32_t>& ids, const std::string& text);
  // Flushes; `engine_reason` is a seatrt_finish_reason; returns the client's.
  ParsedDelta finish(int32_t engine_reason, int32_t* client_reason);
  // The allowed-token mask for the next step, or empty (no constraint).
  std::vector<uint32_t> allowed_mask();

 private:
  struct Instance;
  void feed_one(Instance& inst, const std::vector<int32_t>& ids, const std::string& text, ParsedDelta& out);
  const SeatRuntime& seat_;
  std::unique_ptr<Instance> reasoning_;
  std::unique_ptr<Instance> tool_;
  seatrt_vocab vocab_{};
};

}  // namespace seatrt::server
