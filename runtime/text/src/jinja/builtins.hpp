// The built-in filters, tests, methods and globals of the Jinja engine.
#pragma once

#include <string>
#include <string_view>

#include "seatrt/text/jinja/value.hpp"

namespace seatrt::text::jinja {

bool has_filter(std::string_view name);
bool has_test(std::string_view name);

// Applies filter `name` to `operand` (args exclude the operand).
Value apply_filter(Interpreter& in, std::string_view name, const Value& operand, Args& args);
bool apply_test(Interpreter& in, std::string_view name, const Value& operand, Args& args);

// `object.name` when it is a method (str.split, dict.get, ...): a bound
// callable, or Undefined when there is no such method.
Value bound_method(const Value& object, const std::string& name);

// The globals every render gets (range, namespace, raise_exception, dict, strftime_now).
Dict builtin_globals();

// Python json.dumps(value, ensure_ascii, indent, separators, sort_keys).
struct JsonStyle {
  bool ensure_ascii = false;
  std::string indent;  // "" = no newlines; otherwise the indent unit
  bool pretty = false; // indent given (even an empty one: newlines)
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};
std::string to_json(const Value& value, const JsonStyle& style);

}  // namespace seatrt::text::jinja
