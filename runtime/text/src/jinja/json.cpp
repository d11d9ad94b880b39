// Python json.dumps for template values (transformers' tojson).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "../utf8.hpp"
#include "builtins.hpp"

namespace seatrt::text::jinja {

namespace {

void append_json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20) {
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
      continue;
    }
    const size_t start = i;
    const char32_t cp = utf8::next_code_point(s, i);
    if (!ensure_ascii) {
      out.append(s, start, i - start);
    } else if (cp < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      const char32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                    static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      out += buf;
    }
  }
  out += '"';
}

void dump(std::string& out, const Value& v, const JsonStyle& style, int level) {
  if (level > 512) throw std::runtime_error("tojson: value nested too deeply");
  auto newline = [&](int lvl) {
    out += '\n';
    for (int i = 0; i < lvl; ++i) out += style.indent;
  };
  switch (v.kind) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.b ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.i); return;
    case Value::Kind::Float:
      if (std::isnan(v.f)) out += "NaN";
      else if (std::isinf(v.f)) out += v.f > 0 ? "Infinity" : "-Infinity";
      else out += float_repr(v.f);
      return;
    case Value::Kind::String: append_json_string(out, v.s, style.ensure_ascii); return;
    case Value::Kind::Sequence: {
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += style.item_separator;
        if (style.pretty) newline(level + 1);
        dump(out, (*v.list)[i], style, level + 1);
      }
      if (style.pretty) newline(level);
      out += ']';
      return;
    }
    case Value::Kind::Mapping: {
      if (v.dict->empty()) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& kv : *v.dict) items.push_back(&kv);
      if (style.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += style.item_separator;
        if (style.pretty) newline(level + 1);
        append_json_string(out, items[i]->first, style.ensure_ascii);
        out += style.key_separator;
        dump(out, items[i]->second, style, level + 1);
      }
      if (style.pretty) newline(level);
      out += '}';
      return;
    }
    default:
      throw std::runtime_error("Object of type " + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace

std::string to_json(const Value& value, const JsonStyle& style) {
  std::string out;
  dump(out, value, style, 0);
  return out;
}

}  // namespace seatrt::text::jinja
