// Python semantics of Jinja values: truth, equality, ordering, str() and repr().
#include "seatrt/text/jinja/value.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "../utf8.hpp"

namespace seatrt::text::jinja {

const Value* Value::find(std::string_view key) const {
  if (!dict || (kind != Kind::Mapping && kind != Kind::Namespace)) return nullptr;
  for (const auto& [k, v] : *dict)
    if (k == key) return &v;
  return nullptr;
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return false;
    case Value::Kind::Bool: return v.b;
    case Value::Kind::Int: return v.i != 0;
    case Value::Kind::Float: return v.f != 0.0;
    case Value::Kind::String: return !v.s.empty();
    case Value::Kind::Sequence: return !v.list->empty();
    case Value::Kind::Mapping: return !v.dict->empty();
    case Value::Kind::Callable:
    case Value::Kind::Namespace: return true;
  }
  return false;
}

namespace {
double as_double(const Value& v) {
  return v.kind == Value::Kind::Float ? v.f : v.kind == Value::Kind::Int ? static_cast<double>(v.i) : (v.b ? 1.0 : 0.0);
}
bool both_integral(const Value& a, const Value& b) {
  return a.kind != Value::Kind::Float && b.kind != Value::Kind::Float;
}
int64_t as_int(const Value& v) { return v.kind == Value::Kind::Int ? v.i : (v.b ? 1 : 0); }
}  // namespace

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number())
    return both_integral(a, b) ? as_int(a) == as_int(b) : as_double(a) == as_double(b);
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.s == b.s;
    case Value::Kind::Sequence:
      if (a.is_tuple != b.is_tuple || a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); ++i)
        if (!equals((*a.list)[i], (*b.list)[i])) return false;
      return true;
    case Value::Kind::Mapping:
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& [k, v] : *a.dict) {
        const Value* other = b.find(k);
        if (other == nullptr || !equals(v, *other)) return false;
      }
      return true;
    case Value::Kind::Callable: return a.fn == b.fn;
    case Value::Kind::Namespace: return a.dict == b.dict;
    default: return false;
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number())
    return both_integral(a, b) ? as_int(a) < as_int(b) : as_double(a) < as_double(b);
  if (a.is_string() && b.is_string()) return a.s < b.s;  // UTF-8 byte order = code point order
  if (a.is_list() && b.is_list() && a.is_tuple == b.is_tuple) {
    const size_t n = std::min(a.list->size(), b.list->size());
    for (size_t i = 0; i < n; ++i) {
      if (!equals((*a.list)[i], (*b.list)[i])) return less_than((*a.list)[i], (*b.list)[i]);
    }
    return a.list->size() < b.list->size();
  }
  throw std::runtime_error("'<' not supported between instances of '" + type_name(a) + "' and '" +
                           type_name(b) + "'");
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return "str";
    case Value::Kind::Sequence: return v.is_tuple ? "tuple" : "list";
    case Value::Kind::Mapping: return "dict";
    case Value::Kind::Callable: return "function";
    case Value::Kind::Namespace: return "Namespace";
  }
  return "object";
}

std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: fixed notation for
  // decimal exponents in [-4, 16), else d.ddde+XX.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string sci(buf, res.ptr);
  const size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (const char c : mantissa)
    if (c != '.') digits += c;
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + e;
  }
  if (exponent < 0) return out + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  const auto int_len = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_len) return out + digits + std::string(int_len - digits.size(), '0') + ".0";
  return out + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

namespace {
// Python's str.isprintable(), approximately: controls, separators other than
// ' ', format characters and private use are not printable.
bool printable(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp >= 0x80 && cp <= 0xA0) return false;
  if (cp == 0xAD) return false;
  if ((cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F))
    return false;
  if (cp == 0x1680 || cp == 0x3000 || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB)) return false;
  if ((cp >= 0xD800 && cp <= 0xF8FF) || cp >= 0xF0000) return false;  // surrogates, private use
  return true;
}

std::string string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = utf8::next_code_point(s, i);
    char esc[16];
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (printable(cp)) {
      utf8::append_code_point(out, cp);
    } else {
      if (cp < 0x100) std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned>(cp));
      else if (cp < 0x10000) std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(cp));
      else std::snprintf(esc, sizeof esc, "\\U%08x", static_cast<unsigned>(cp));
      out += esc;
    }
  }
  out += quote;
  return out;
}
}  // namespace

std::string to_repr(const Value& v) {
  switch (v.kind) {
    case Value::Kind::String: return string_repr(v.s);
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::Sequence: {
      std::string out = v.is_tuple ? "(" : "[";
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += ", ";
        out += to_repr((*v.list)[i]);
      }
      if (v.is_tuple && v.list->size() == 1) out += ",";
      return out + (v.is_tuple ? ")" : "]");
    }
    case Value::Kind::Mapping: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, item] : *v.dict) {
        if (!first) out += ", ";
        first = false;
        out += string_repr(k) + ": " + to_repr(item);
      }
      return out + "}";
    }
    case Value::Kind::Namespace: {
      std::string out = "<Namespace {";
      bool first = true;
      for (const auto& [k, item] : *v.dict) {
        if (!first) out += ", ";
        first = false;
        out += string_repr(k) + ": " + to_repr(item);
      }
      return out + "}>";
    }
    default: return to_str(v);
  }
}

std::string to_str(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined: return "";
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.b ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.i);
    case Value::Kind::Float: return float_repr(v.f);
    case Value::Kind::String: return v.s;
    case Value::Kind::Callable: return "<function " + v.fn->name + ">";
    default: return to_repr(v);
  }
}

}  // namespace seatrt::text::jinja
