// The built-in filters (jinja2's, with transformers' tojson).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>

#include "../utf8.hpp"
#include "args.hpp"
#include "builtins.hpp"
#include "interpreter.hpp"
#include "strings.hpp"

namespace seatrt::text::jinja {

namespace {

using FilterFn = Value (*)(Interpreter&, const Value&, Args&);

// jinja2's attribute getter: "a.b.0" walks items/attributes.
Value get_attribute_path(Interpreter& in, const Value& item, const std::string& path) {
  Value v = item;
  size_t pos = 0;
  while (true) {
    const size_t dot = path.find('.', pos);
    const std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    v = in.getitem(v, numeric ? Value::integer(std::strtoll(part.c_str(), nullptr, 10)) : Value::string(part));
    if (dot == std::string::npos) return v;
    pos = dot + 1;
  }
}

// Sort key transformation: lower-case strings unless case_sensitive.
Value sort_key(const Value& v, bool case_sensitive) {
  return !case_sensitive && v.is_string() ? Value::string(py::lower(v.s)) : v;
}

Value f_abs(Interpreter&, const Value& v, Args&) {
  if (v.kind == Value::Kind::Int) {
    if (v.i == INT64_MIN) throw std::runtime_error("integer overflow");
    return Value::integer(v.i < 0 ? -v.i : v.i);
  }
  if (v.kind == Value::Kind::Float) return Value::number(std::fabs(v.f));
  if (v.kind == Value::Kind::Bool) return Value::integer(v.b ? 1 : 0);
  throw std::runtime_error("bad operand type for abs(): '" + type_name(v) + "'");
}

Value f_attr(Interpreter& in, const Value& v, Args& a) { return in.getattr(v, str_arg(a, 0, "name", "")); }

Value f_batch(Interpreter& in, const Value& v, Args& a) {
  const int64_t n = int_arg(a, 0, "linecount", 1);
  if (n <= 0) throw std::runtime_error("batch size must be positive");
  const Value fill = arg(a, 1, "fill_with", Value::none());
  List out, current;
  for (const auto& item : in.iterate(v)) {
    current.push_back(item);
    if (static_cast<int64_t>(current.size()) == n) {
      out.push_back(Value::from_list(std::move(current)));
      current.clear();
    }
  }
  if (!current.empty()) {
    if (!fill.is_none())
      while (static_cast<int64_t>(current.size()) < n) current.push_back(fill);
    out.push_back(Value::from_list(std::move(current)));
  }
  return Value::from_list(std::move(out));
}

Value f_capitalize(Interpreter&, const Value& v, Args&) { return Value::string(py::capitalize(to_str(v))); }

Value f_center(Interpreter&, const Value& v, Args& a) {
  const std::string s = to_str(v);
  const auto width = static_cast<size_t>(std::max<int64_t>(0, int_arg(a, 0, "width", 80)));
  const size_t len = utf8::code_point_count(s);
  if (len >= width) return Value::string(s);
  const size_t total = width - len;
  const size_t left = total / 2 + (total & width & 1);  // Python's str.center rounding
  return Value::string(std::string(left, ' ') + s + std::string(total - left, ' '));
}

Value f_default(Interpreter&, const Value& v, Args& a) {
  const bool boolean = bool_arg(a, 1, "boolean", false);
  if (v.is_undefined() || (boolean && !truthy(v))) return arg(a, 0, "default_value", Value::string(""));
  return v;
}

Value f_dictsort(Interpreter&, const Value& v, Args& a) {
  if (v.is_undefined()) throw std::runtime_error(v.s.empty() ? "value is undefined" : v.s);
  if (v.kind != Value::Kind::Mapping && v.kind != Value::Kind::Namespace)
    throw std::runtime_error("dictsort: '" + type_name(v) + "' object has no attribute 'items'");
  const bool case_sensitive = bool_arg(a, 0, "case_sensitive", false);
  const std::string by = str_arg(a, 1, "by", "key");
  const bool reverse = bool_arg(a, 2, "reverse", false);
  if (by != "key" && by != "value") throw std::runtime_error("You can only sort by either 'key' or 'value'");
  std::vector<std::pair<std::string, Value>> items(v.dict->begin(), v.dict->end());
  std::stable_sort(items.begin(), items.end(), [&](const auto& x, const auto& y) {
    const Value kx = sort_key(by == "key" ? Value::string(x.first) : x.second, case_sensitive);
    const Value ky = sort_key(by == "key" ? Value::string(y.first) : y.second, case_sensitive);
    return reverse ? less_than(ky, kx) : less_than(kx, ky);
  });
  List out;
  for (auto& [k, item] : items) out.push_back(Value::from_list({Value::string(k), item}, true));
  return Value::from_list(std::move(out));
}

Value f_escape(Interpreter&, const Value& v, Args&) { return Value::string(py::html_escape(to_str(v))); }

Value f_first(Interpreter& in, const Value& v, Args&) {
  const auto items = in.iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(Interpreter& in, const Value& v, Args&) {
  const auto items = in.iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_float(Interpreter&, const Value& v, Args& a) {
  const Value fallback = arg(a, 0, "default", Value::number(0.0));
  if (v.is_number()) return Value::number(v.kind == Value::Kind::Float ? v.f : static_cast<double>(v.kind == Value::Kind::Int ? v.i : v.b));
  if (v.is_string()) {
    const std::string s = py::strip(v.s, true, true, nullptr);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Value::number(d);
  }
  return fallback;
}

Value f_int(Interpreter&, const Value& v, Args& a) {
  const Value fallback = arg(a, 0, "default", Value::integer(0));
  const int64_t base = int_arg(a, 1, "base", 10);
  if (v.kind == Value::Kind::Int) return v;
  if (v.kind == Value::Kind::Bool) return Value::integer(v.b ? 1 : 0);
  if (v.kind == Value::Kind::Float) {
    if (!std::isfinite(v.f) || std::fabs(v.f) >= 9.2e18) return fallback;
    return Value::integer(static_cast<int64_t>(v.f));
  }
  if (v.is_string()) {
    const std::string s = py::strip(v.s, true, true, nullptr);
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, static_cast<int>(base));
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0) return Value::integer(i);
    const double d = std::strtod(s.c_str(), &end);  // jinja2 falls back to int(float(value))
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d) && std::fabs(d) < 9.2e18)
      return Value::integer(static_cast<int64_t>(d));
  }
  return fallback;
}

Value f_indent(Interpreter&, const Value& v, Args& a) {
  const Value w = arg(a, 0, "width", Value::integer(4));
  const std::string pad = w.is_string() ? w.s : std::string(static_cast<size_t>(std::max<int64_t>(0, int_arg(a, 0, "width", 4))), ' ');
  const bool first = bool_arg(a, 1, "first", false);
  const bool blank = bool_arg(a, 2, "blank", false);
  const std::string s = to_str(v);
  std::vector<std::string> lines;
  size_t pos = 0;
  for (size_t nl; (nl = s.find('\n', pos)) != std::string::npos; pos = nl + 1) lines.push_back(s.substr(pos, nl - pos));
  lines.push_back(s.substr(pos));
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    const bool is_blank = py::strip(lines[i], true, true, nullptr).empty();
    if ((i > 0 || first) && (blank || !is_blank)) out += pad;
    out += lines[i];
  }
  return Value::string(out);
}

Value f_items(Interpreter&, const Value& v, Args&) {
  if (v.is_undefined()) return Value::from_list({});
  if (v.kind != Value::Kind::Mapping && v.kind != Value::Kind::Namespace)
    throw std::runtime_error("Can only get item pairs from a mapping.");
  List out;
  for (const auto& [k, item] : *v.dict) out.push_back(Value::from_list({Value::string(k), item}, true));
  return Value::from_list(std::move(out));
}

Value f_join(Interpreter& in, const Value& v, Args& a) {
  const std::string sep = str_arg(a, 0, "d", "");
  const Value attribute = arg(a, 1, "attribute");
  std::string out;
  bool first = true;
  for (const auto& item : in.iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += to_str(attribute.is_undefined() ? item : get_attribute_path(in, item, to_str(attribute)));
  }
  return Value::string(out);
}

Value f_length(Interpreter&, const Value& v, Args&) {
  switch (v.kind) {
    case Value::Kind::Undefined: return Value::integer(0);
    case Value::Kind::String: return Value::integer(static_cast<int64_t>(utf8::code_point_count(v.s)));
    case Value::Kind::Sequence: return Value::integer(static_cast<int64_t>(v.list->size()));
    case Value::Kind::Mapping: return Value::integer(static_cast<int64_t>(v.dict->size()));
    default: throw std::runtime_error("object of type '" + type_name(v) + "' has no len()");
  }
}

Value f_list(Interpreter& in, const Value& v, Args&) { return Value::from_list(in.iterate(v)); }
Value f_lower(Interpreter&, const Value& v, Args&) { return Value::string(py::lower(to_str(v))); }
Value f_upper(Interpreter&, const Value& v, Args&) { return Value::string(py::upper(to_str(v))); }
// jinja2's title (not str.title): words start after whitespace or any of -({[<.
Value f_title(Interpreter&, const Value& v, Args&) {
  const std::string s = to_str(v);
  std::string out;
  bool word_start = true;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    utf8::next_code_point(s, i);
    const std::string ch = s.substr(start, i - start);
    const bool separator = ch.size() == 1 && ch[0] != '\0' && std::strchr(" \t\n\r\f\v-({[<", ch[0]) != nullptr;
    if (separator) {
      out += ch;
      word_start = true;
    } else {
      out += word_start ? py::upper(ch) : py::lower(ch);
      word_start = false;
    }
  }
  return Value::string(out);
}
Value f_string(Interpreter&, const Value& v, Args&) { return Value::string(to_str(v)); }
Value f_safe(Interpreter&, const Value& v, Args&) { return Value::string(to_str(v)); }
Value f_pprint(Interpreter&, const Value& v, Args&) { return Value::string(to_repr(v)); }

Value f_map(Interpreter& in, const Value& v, Args& a) {
  List out;
  const Value attribute = arg(a, 99, "attribute");
  if (!attribute.is_undefined()) {
    const Value dflt = arg(a, 99, "default");
    for (const auto& item : in.iterate(v)) {
      Value x = get_attribute_path(in, item, to_str(attribute));
      out.push_back(x.is_undefined() && !dflt.is_undefined() ? dflt : x);
    }
    return Value::from_list(std::move(out));
  }
  if (a.positional.empty()) throw std::runtime_error("map requires a filter argument");
  const std::string filter = to_str(a.positional[0]);
  if (!has_filter(filter)) throw std::runtime_error("No filter named '" + filter + "'.");
  Args rest;
  rest.positional.assign(a.positional.begin() + 1, a.positional.end());
  rest.keyword = a.keyword;
  for (const auto& item : in.iterate(v)) {
    Args copy = rest;
    out.push_back(apply_filter(in, filter, item, copy));
  }
  return Value::from_list(std::move(out));
}

// select / reject / selectattr / rejectattr.
Value select_impl(Interpreter& in, const Value& v, Args& a, bool with_attribute, bool keep_when) {
  size_t next = 0;
  std::string attribute;
  if (with_attribute) {
    if (a.positional.empty()) throw std::runtime_error("missing attribute argument");
    attribute = to_str(a.positional[next++]);
  }
  std::string test;
  if (next < a.positional.size()) {
    test = to_str(a.positional[next++]);
    if (!has_test(test)) throw std::runtime_error("No test named '" + test + "'.");
  }
  Args rest;
  rest.positional.assign(a.positional.begin() + static_cast<std::ptrdiff_t>(next), a.positional.end());
  rest.keyword = a.keyword;
  List out;
  for (const auto& item : in.iterate(v)) {
    const Value subject = with_attribute ? get_attribute_path(in, item, attribute) : item;
    Args copy = rest;
    const bool passed = test.empty() ? truthy(subject) : apply_test(in, test, subject, copy);
    if (passed == keep_when) out.push_back(item);
  }
  return Value::from_list(std::move(out));
}
Value f_select(Interpreter& in, const Value& v, Args& a) { return select_impl(in, v, a, false, true); }
Value f_reject(Interpreter& in, const Value& v, Args& a) { return select_impl(in, v, a, false, false); }
Value f_selectattr(Interpreter& in, const Value& v, Args& a) { return select_impl(in, v, a, true, true); }
Value f_rejectattr(Interpreter& in, const Value& v, Args& a) { return select_impl(in, v, a, true, false); }

std::vector<Value> sorted_items(Interpreter& in, const Value& v, Args& a, size_t case_pos, size_t attr_pos,
                                bool reverse) {
  const bool case_sensitive = bool_arg(a, case_pos, "case_sensitive", false);
  const Value attribute = arg(a, attr_pos, "attribute");
  std::vector<Value> items = in.iterate(v);
  std::vector<std::pair<Value, size_t>> keyed;
  for (size_t i = 0; i < items.size(); ++i) {
    const Value key = attribute.is_undefined() ? items[i] : get_attribute_path(in, items[i], to_str(attribute));
    keyed.emplace_back(sort_key(key, case_sensitive), i);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? less_than(y.first, x.first) : less_than(x.first, y.first);
  });
  std::vector<Value> out;
  for (const auto& [key, i] : keyed) out.push_back(items[i]);
  return out;
}

Value f_sort(Interpreter& in, const Value& v, Args& a) {
  return Value::from_list(sorted_items(in, v, a, 1, 2, bool_arg(a, 0, "reverse", false)));
}

Value f_max(Interpreter& in, const Value& v, Args& a) {
  const auto items = sorted_items(in, v, a, 0, 1, false);
  return items.empty() ? Value::undefined("No aggregated item, sequence was empty.") : items.back();
}

Value f_min(Interpreter& in, const Value& v, Args& a) {
  const auto items = sorted_items(in, v, a, 0, 1, false);
  return items.empty() ? Value::undefined("No aggregated item, sequence was empty.") : items.front();
}

Value f_unique(Interpreter& in, const Value& v, Args& a) {
  const bool case_sensitive = bool_arg(a, 0, "case_sensitive", false);
  const Value attribute = arg(a, 1, "attribute");
  List out;
  std::vector<Value> seen;
  for (const auto& item : in.iterate(v)) {
    const Value key = sort_key(attribute.is_undefined() ? item : get_attribute_path(in, item, to_str(attribute)), case_sensitive);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value::from_list(std::move(out));
}

Value f_replace(Interpreter&, const Value& v, Args& a) {
  return Value::string(py::replace(to_str(v), str_arg(a, 0, "old", ""), str_arg(a, 1, "new", ""), int_arg(a, 2, "count", -1)));
}

Value f_reverse(Interpreter& in, const Value& v, Args&) {
  if (v.is_string()) {
    auto chars = in.iterate(v);
    std::string out;
    for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += it->s;
    return Value::string(out);
  }
  auto items = in.iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::from_list(std::move(items));
}

Value f_round(Interpreter&, const Value& v, Args& a) {
  const int64_t precision = int_arg(a, 0, "precision", 0);
  const std::string method = str_arg(a, 1, "method", "common");
  if (!v.is_number()) throw std::runtime_error("round: '" + type_name(v) + "' is not a number");
  const double x = v.kind == Value::Kind::Float ? v.f : static_cast<double>(v.kind == Value::Kind::Int ? v.i : v.b);
  const double scale = std::pow(10.0, static_cast<double>(precision));
  double r;
  if (method == "common" && precision >= 0 && precision < 300) {
    // Python rounds the exact binary value correctly (2.675 -> 2.67); so does printf.
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(precision), x);
    r = std::strtod(buf, nullptr);
  } else if (method == "common") r = std::nearbyint(x * scale) / scale;
  else if (method == "ceil") r = std::ceil(x * scale) / scale;
  else if (method == "floor") r = std::floor(x * scale) / scale;
  else throw std::runtime_error("method must be common, ceil or floor");
  return Value::number(r);
}

Value f_sum(Interpreter& in, const Value& v, Args& a) {
  const Value attribute = arg(a, 0, "attribute");
  Value total = arg(a, 1, "start", Value::integer(0));
  for (const auto& item : in.iterate(v))
    total = arithmetic("+", total, attribute.is_undefined() ? item : get_attribute_path(in, item, to_str(attribute)));
  return total;
}

Value f_tojson(Interpreter&, const Value& v, Args& a) {
  JsonStyle style;
  style.ensure_ascii = bool_arg(a, 99, "ensure_ascii", false);
  const Value indent = arg(a, 0, "indent", Value::none());
  if (!indent.is_none() && !indent.is_undefined()) {
    style.pretty = true;
    style.indent = indent.is_string() ? indent.s : std::string(static_cast<size_t>(std::max<int64_t>(0, int_arg(a, 0, "indent", 0))), ' ');
    style.item_separator = ",";
  }
  const Value separators = arg(a, 99, "separators", Value::none());
  if (separators.is_list() && separators.list->size() == 2) {
    style.item_separator = to_str((*separators.list)[0]);
    style.key_separator = to_str((*separators.list)[1]);
  }
  style.sort_keys = bool_arg(a, 99, "sort_keys", false);
  return Value::string(to_json(v, style));
}

Value f_trim(Interpreter&, const Value& v, Args& a) {
  const Value chars = arg(a, 0, "chars", Value::none());
  const std::string chars_text = to_str(chars);
  return Value::string(py::strip(to_str(v), true, true, chars.is_string() ? &chars_text : nullptr));
}

Value f_wordcount(Interpreter&, const Value& v, Args&) {
  return Value::integer(static_cast<int64_t>(py::split(to_str(v), nullptr, -1).size()));
}

// "%s" % args: the printf subset templates use (%s %r %d %i %f %%).
Value f_format(Interpreter&, const Value& v, Args& a) {
  const std::string fmt = to_str(v);
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 >= fmt.size()) {
      out += fmt[i];
      continue;
    }
    const char spec = fmt[++i];
    if (spec == '%') {
      out += '%';
      continue;
    }
    if (next >= a.positional.size()) throw std::runtime_error("not enough arguments for format string");
    const Value& x = a.positional[next++];
    if (spec == 's') out += to_str(x);
    else if (spec == 'r') out += to_repr(x);
    else if (spec == 'd' || spec == 'i') out += std::to_string(x.kind == Value::Kind::Float ? static_cast<int64_t>(x.f) : x.kind == Value::Kind::Int ? x.i : static_cast<int64_t>(x.b));
    else if (spec == 'f') {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%f", x.kind == Value::Kind::Float ? x.f : static_cast<double>(x.kind == Value::Kind::Int ? x.i : x.b));
      out += buf;
    } else throw std::runtime_error(std::string("unsupported format character '") + spec + "'");
  }
  return Value::string(out);
}

const std::map<std::string, FilterFn, std::less<>>& filters() {
  static const std::map<std::string, FilterFn, std::less<>> table = {
      {"abs", f_abs}, {"attr", f_attr}, {"batch", f_batch}, {"capitalize", f_capitalize},
      {"center", f_center}, {"count", f_length}, {"d", f_default}, {"default", f_default},
      {"dictsort", f_dictsort}, {"e", f_escape}, {"escape", f_escape}, {"first", f_first},
      {"float", f_float}, {"format", f_format}, {"indent", f_indent}, {"int", f_int},
      {"items", f_items}, {"join", f_join}, {"last", f_last}, {"length", f_length},
      {"list", f_list}, {"lower", f_lower}, {"map", f_map}, {"max", f_max}, {"min", f_min},
      {"pprint", f_pprint}, {"reject", f_reject}, {"rejectattr", f_rejectattr},
      {"replace", f_replace}, {"reverse", f_reverse}, {"round", f_round}, {"safe", f_safe},
      {"select", f_select}, {"selectattr", f_selectattr}, {"sort", f_sort}, {"string", f_string},
      {"sum", f_sum}, {"title", f_title}, {"tojson", f_tojson}, {"trim", f_trim},
      {"unique", f_unique}, {"upper", f_upper}, {"wordcount", f_wordcount},
  };
  return table;
}

}  // namespace

bool has_filter(std::string_view name) { return filters().count(name) != 0; }

Value apply_filter(Interpreter& in, std::string_view name, const Value& operand, Args& args) {
  const auto it = filters().find(name);
  if (it == filters().end()) throw std::runtime_error("No filter named '" + std::string(name) + "'.");
  return it->second(in, operand, args);
}

}  // namespace seatrt::text::jinja
