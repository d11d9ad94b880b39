// Example 3: CALL-line parsing (see call_parser.hpp).
#include "call_parser.hpp"

namespace example_parser {
namespace {

constexpr std::string_view kPrefix = "CALL ";

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool CallParser::may_become_call(std::string_view partial) const {
  if (!calls_enabled_) return false;
  const std::size_t n = partial.size() < kPrefix.size() ? partial.size() : kPrefix.size();
  return partial.substr(0, n) == kPrefix.substr(0, n);
}

void CallParser::emit_line(std::string_view line, bool has_newline, const Sink& sink) {
  if (calls_enabled_ && line.substr(0, kPrefix.size()) == kPrefix) {
    std::string_view rest = trim(line.substr(kPrefix.size()));
    std::size_t name_end = 0;
    while (name_end < rest.size() && is_name_char(rest[name_end])) ++name_end;
    const std::string_view name = rest.substr(0, name_end);
    const std::string_view args = trim(rest.substr(name_end));
    // A well-formed call has a name and a JSON object; anything else stays
    // content so that nothing the model wrote is lost.
    if (!name.empty() && args.size() >= 2 && args.front() == '{' && args.back() == '}') {
      const int index = calls_++;
      sink.tool_call(index, "call_" + std::to_string(index), std::string(name), args);
      return;
    }
  }
  sink.content(line);
  if (has_newline) sink.content("\n");
}

void CallParser::feed(std::string_view text, const Sink& sink) {
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view chunk = text.substr(0, newline);
    if (line_is_content_) {
      sink.content(chunk);  // already known to be content: stream it
    } else {
      pending_.append(chunk);
      if (!may_become_call(pending_)) {  // can no longer be a call: release it
        sink.content(pending_);
        pending_.clear();
        line_is_content_ = true;
      }
    }
    if (newline == std::string_view::npos) return;
    // The line is complete.
    if (line_is_content_) sink.content("\n");
    else emit_line(pending_, true, sink);
    pending_.clear();
    line_is_content_ = false;
    text.remove_prefix(newline + 1);
  }
}

void CallParser::finish(const Sink& sink) {
  if (!line_is_content_ && !pending_.empty()) emit_line(pending_, false, sink);
  pending_.clear();
  line_is_content_ = false;
}

}  // namespace example_parser
