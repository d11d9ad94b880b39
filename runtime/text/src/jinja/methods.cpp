// Methods of built-in types callable from templates (str.split, dict.get,
// ...).  Only the side-effect-free ones: jinja2's immutable sandbox, which
// transformers uses, forbids list.append, dict.update and the like.
#include <stdexcept>

#include "../utf8.hpp"
#include "args.hpp"
#include "builtins.hpp"
#include "interpreter.hpp"
#include "strings.hpp"

namespace seatrt::text::jinja {

namespace {

Value method(const std::string& name, NativeFn fn) { return Value::function(name, std::move(fn)); }

// str.startswith / endswith accept a string or a tuple of strings.
bool affix_match(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const std::string& a) {
    return prefix ? s.compare(0, a.size(), a) == 0 && s.size() >= a.size()
                  : s.size() >= a.size() && s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (affix.is_list()) {
    for (const auto& a : *affix.list)
      if (one(to_str(a))) return true;
    return false;
  }
  if (!affix.is_string()) throw std::runtime_error("startswith/endswith argument must be str or a tuple of str");
  return one(affix.s);
}

Value string_method(const std::string& s, const std::string& name) {
  if (name == "startswith" || name == "endswith") {
    const bool prefix = name == "startswith";
    return method(name, [s, prefix](Interpreter&, Args& a) { return Value::boolean(affix_match(s, arg(a, 0, "prefix"), prefix)); });
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const bool left = name != "rstrip", right = name != "lstrip";
    return method(name, [s, left, right](Interpreter&, Args& a) {
      const Value chars = arg(a, 0, "chars", Value::none());
      const std::string text = to_str(chars);
      return Value::string(py::strip(s, left, right, chars.is_string() ? &text : nullptr));
    });
  }
  if (name == "split" || name == "rsplit") {
    const bool reverse = name == "rsplit";
    return method(name, [s, reverse](Interpreter&, Args& a) {
      const Value sep = arg(a, 0, "sep", Value::none());
      const std::string sep_text = to_str(sep);
      const int64_t maxsplit = int_arg(a, 1, "maxsplit", -1);
      std::vector<std::string> parts;
      if (reverse && maxsplit >= 0 && sep.is_string()) {
        // rsplit with a limit: split from the right.
        std::string rest = s;
        std::vector<std::string> tail;
        while (static_cast<int64_t>(tail.size()) < maxsplit) {
          const size_t hit = rest.rfind(sep_text);
          if (hit == std::string::npos) break;
          tail.insert(tail.begin(), rest.substr(hit + sep_text.size()));
          rest.resize(hit);
        }
        parts.push_back(rest);
        parts.insert(parts.end(), tail.begin(), tail.end());
      } else {
        parts = py::split(s, sep.is_string() ? &sep_text : nullptr, maxsplit);
      }
      List out;
      for (auto& p : parts) out.push_back(Value::string(std::move(p)));
      return Value::from_list(std::move(out));
    });
  }
  if (name == "splitlines") {
    return method(name, [s](Interpreter&, Args&) {
      List out;
      size_t pos = 0;
      while (pos < s.size()) {
        size_t nl = s.find_first_of("\r\n", pos);
        if (nl == std::string::npos) {
          out.push_back(Value::string(s.substr(pos)));
          break;
        }
        out.push_back(Value::string(s.substr(pos, nl - pos)));
        pos = nl + ((s[nl] == '\r' && nl + 1 < s.size() && s[nl + 1] == '\n') ? 2 : 1);
      }
      return Value::from_list(std::move(out));
    });
  }
  if (name == "replace") {
    return method(name, [s](Interpreter&, Args& a) {
      return Value::string(py::replace(s, str_arg(a, 0, "old", ""), str_arg(a, 1, "new", ""), int_arg(a, 2, "count", -1)));
    });
  }
  if (name == "upper") return method(name, [s](Interpreter&, Args&) { return Value::string(py::upper(s)); });
  if (name == "lower") return method(name, [s](Interpreter&, Args&) { return Value::string(py::lower(s)); });
  if (name == "title") return method(name, [s](Interpreter&, Args&) { return Value::string(py::title(s)); });
  if (name == "capitalize") return method(name, [s](Interpreter&, Args&) { return Value::string(py::capitalize(s)); });
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    return method(name, [s, name](Interpreter&, Args& a) {
      const std::string sub = str_arg(a, 0, "sub", "");
      const size_t hit = name[0] == 'r' ? s.rfind(sub) : s.find(sub);
      if (hit == std::string::npos) {
        if (name.find("index") != std::string::npos) throw std::runtime_error("substring not found");
        return Value::integer(-1);
      }
      return Value::integer(static_cast<int64_t>(utf8::code_point_count(std::string_view(s).substr(0, hit))));
    });
  }
  if (name == "count") {
    return method(name, [s](Interpreter&, Args& a) {
      const std::string sub = str_arg(a, 0, "sub", "");
      if (sub.empty()) return Value::integer(static_cast<int64_t>(utf8::code_point_count(s) + 1));
      int64_t n = 0;
      for (size_t pos = 0; (pos = s.find(sub, pos)) != std::string::npos; pos += sub.size()) ++n;
      return Value::integer(n);
    });
  }
  if (name == "join") {
    return method(name, [s](Interpreter& in, Args& a) {
      std::string out;
      bool first = true;
      for (const auto& item : in.iterate(arg(a, 0, "iterable"))) {
        if (!item.is_string()) throw std::runtime_error("sequence item: expected str instance, " + type_name(item) + " found");
        if (!first) out += s;
        first = false;
        out += item.s;
      }
      return Value::string(out);
    });
  }
  auto predicate = [&](auto fn) {
    return method(name, [s, fn](Interpreter&, Args&) {
      if (s.empty()) return Value::boolean(false);
      for (const char c : s)
        if (!fn(static_cast<unsigned char>(c))) return Value::boolean(false);
      return Value::boolean(true);
    });
  };
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") return predicate([](unsigned char c) { return c >= '0' && c <= '9'; });
  if (name == "isalpha") return predicate([](unsigned char c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; });
  if (name == "isalnum") return predicate([](unsigned char c) { return ((c | 32) >= 'a' && (c | 32) <= 'z') || (c >= '0' && c <= '9'); });
  if (name == "isspace") return predicate([](unsigned char c) { return c == ' ' || (c >= 9 && c <= 13); });
  if (name == "isupper") return method(name, [s](Interpreter&, Args&) { return Value::boolean(py::upper(s) == s && py::lower(s) != s); });
  if (name == "islower") return method(name, [s](Interpreter&, Args&) { return Value::boolean(py::lower(s) == s && py::upper(s) != s); });
  return Value::undefined();
}

Value dict_method(const Value& d, const std::string& name) {
  if (name == "get") {
    return method(name, [d](Interpreter&, Args& a) {
      const Value key = arg(a, 0, "key");
      const Value* v = key.is_string() ? d.find(key.s) : nullptr;
      return v ? *v : arg(a, 1, "default", Value::none());
    });
  }
  if (name == "items" || name == "keys" || name == "values") {
    return method(name, [d, name](Interpreter&, Args&) {
      List out;
      for (const auto& [k, v] : *d.dict) {
        if (name == "items") out.push_back(Value::from_list({Value::string(k), v}, true));
        else if (name == "keys") out.push_back(Value::string(k));
        else out.push_back(v);
      }
      return Value::from_list(std::move(out));
    });
  }
  return Value::undefined();
}

Value list_method(const Value& l, const std::string& name) {
  if (name == "index") {
    return method(name, [l](Interpreter&, Args& a) {
      const Value x = arg(a, 0, "value");
      for (size_t i = 0; i < l.list->size(); ++i)
        if (equals((*l.list)[i], x)) return Value::integer(static_cast<int64_t>(i));
      throw std::runtime_error(to_repr(x) + " is not in list");
    });
  }
  if (name == "count") {
    return method(name, [l](Interpreter&, Args& a) {
      const Value x = arg(a, 0, "value");
      int64_t n = 0;
      for (const auto& item : *l.list) n += equals(item, x) ? 1 : 0;
      return Value::integer(n);
    });
  }
  return Value::undefined();
}

}  // namespace

Value bound_method(const Value& object, const std::string& name) {
  switch (object.kind) {
    case Value::Kind::String: return string_method(object.s, name);
    case Value::Kind::Mapping: return dict_method(object, name);
    case Value::Kind::Sequence: return list_method(object, name);
    default: return Value::undefined();
  }
}

}  // namespace seatrt::text::jinja
