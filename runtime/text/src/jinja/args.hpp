// Reading built-in arguments the Python way: by position or by keyword.
#pragma once

#include <stdexcept>
#include <string>

#include "seatrt/text/jinja/value.hpp"

namespace seatrt::text::jinja {

// Argument `position` (0-based, after the operand) or keyword `name`, else `fallback`.
inline Value arg(const Args& args, size_t position, const char* name, Value fallback = Value::undefined()) {
  for (const auto& [k, v] : args.keyword)
    if (k == name) return v;
  if (position < args.positional.size()) return args.positional[position];
  return fallback;
}

inline int64_t int_arg(const Args& args, size_t position, const char* name, int64_t fallback) {
  const Value v = arg(args, position, name);
  if (v.is_undefined() || v.is_none()) return fallback;
  if (v.kind == Value::Kind::Int) return v.i;
  if (v.kind == Value::Kind::Bool) return v.b ? 1 : 0;
  throw std::runtime_error(std::string("argument '") + name + "' must be an integer, not " + type_name(v));
}

inline bool bool_arg(const Args& args, size_t position, const char* name, bool fallback) {
  const Value v = arg(args, position, name);
  return v.is_undefined() ? fallback : truthy(v);
}

inline std::string str_arg(const Args& args, size_t position, const char* name, const std::string& fallback) {
  const Value v = arg(args, position, name);
  return v.is_undefined() ? fallback : to_str(v);
}

}  // namespace seatrt::text::jinja
