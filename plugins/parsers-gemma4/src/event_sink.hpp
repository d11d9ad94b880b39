// Where the output parser sends what it finds (the plugin shim forwards
// these to the host's seatrt_parser_events).
#pragma once

#include <string>
#include <string_view>

namespace seatrt::parsers::gemma4 {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void content(std::string_view text) = 0;
  virtual void reasoning(std::string_view text) = 0;
  // id and name are repeated on every piece of call `index`.
  virtual void tool_call(int index, const std::string& id, const std::string& name,
                         std::string_view arguments_delta) = 0;
};

}  // namespace seatrt::parsers::gemma4
