// Example 3: the parser's logic, free of the ABI so it reads (and tests)
// like ordinary C++.
//
// The format: a line `CALL <name> <json object>` is a tool call; every other
// line is content.  Output arrives in arbitrary pieces, so text is held
// back until its line is complete (a line that might still turn out to be a
// call must not leak out as content).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace example_parser {

class CallParser {
 public:
  struct Sink {
    std::function<void(std::string_view)> content;
    // index, id, name, arguments (the whole JSON object in one delta)
    std::function<void(int, const std::string&, const std::string&, std::string_view)> tool_call;
  };

  // calls_enabled = false (tool_choice "none"): every line is content.
  explicit CallParser(bool calls_enabled) : calls_enabled_(calls_enabled) {}

  void feed(std::string_view text, const Sink& sink);
  // Emits whatever is held back (an unterminated last line).
  void finish(const Sink& sink);
  int calls_made() const { return calls_; }

 private:
  void emit_line(std::string_view line, bool has_newline, const Sink& sink);
  // True if `partial` (no newline yet) could still become a call line.
  bool may_become_call(std::string_view partial) const;

  bool calls_enabled_;
  std::string pending_;           // the current line while it may still be a call
  bool line_is_content_ = false;  // the current line is content, streamed as it comes
  int calls_ = 0;
};

}  // namespace example_parser
