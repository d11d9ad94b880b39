// The built-in tests (`x is defined`, ...), as jinja2 defines them.
#include <map>
#include <stdexcept>

#include "args.hpp"
#include "builtins.hpp"
#include "interpreter.hpp"
#include "strings.hpp"

namespace seatrt::text::jinja {

namespace {

using TestFn = bool (*)(Interpreter&, const Value&, Args&);
using K = Value::Kind;

Value first_arg(const Args& a) {
  if (a.positional.empty()) throw std::runtime_error("the test needs an argument");
  return a.positional[0];
}
int64_t int_value(const Value& v) {
  if (v.kind == K::Int) return v.i;
  if (v.kind == K::Bool) return v.b;
  throw std::runtime_error("expected an integer, got " + type_name(v));
}

bool t_defined(Interpreter&, const Value& v, Args&) { return !v.is_undefined(); }
bool t_undefined(Interpreter&, const Value& v, Args&) { return v.is_undefined(); }
bool t_none(Interpreter&, const Value& v, Args&) { return v.is_none(); }
bool t_boolean(Interpreter&, const Value& v, Args&) { return v.kind == K::Bool; }
bool t_true(Interpreter&, const Value& v, Args&) { return v.kind == K::Bool && v.b; }
bool t_false(Interpreter&, const Value& v, Args&) { return v.kind == K::Bool && !v.b; }
bool t_integer(Interpreter&, const Value& v, Args&) { return v.kind == K::Int; }
bool t_float(Interpreter&, const Value& v, Args&) { return v.kind == K::Float; }
bool t_number(Interpreter&, const Value& v, Args&) { return v.is_number(); }
bool t_string(Interpreter&, const Value& v, Args&) { return v.is_string(); }
bool t_mapping(Interpreter&, const Value& v, Args&) { return v.kind == K::Mapping; }
bool t_iterable(Interpreter&, const Value& v, Args&) {
  return v.kind == K::Sequence || v.kind == K::Mapping || v.kind == K::String || v.kind == K::Undefined;
}
bool t_sequence(Interpreter&, const Value& v, Args&) { return v.kind == K::Sequence || v.kind == K::Mapping || v.kind == K::String; }
bool t_callable(Interpreter&, const Value& v, Args&) { return v.kind == K::Callable; }
bool t_escaped(Interpreter&, const Value&, Args&) { return false; }
bool t_sameas(Interpreter&, const Value& v, Args& a) {
  const Value o = first_arg(a);
  if (v.kind != o.kind) return false;
  switch (v.kind) {
    case K::None:
    case K::Undefined: return true;
    case K::Bool: return v.b == o.b;
    case K::Int: return v.i == o.i;  // small-int identity, as CPython caches them
    case K::Sequence: return v.list == o.list;
    case K::Mapping:
    case K::Namespace: return v.dict == o.dict;
    case K::Callable: return v.fn == o.fn;
    default: return false;
  }
}
bool t_in(Interpreter&, const Value& v, Args& a) { return contains(first_arg(a), v); }
bool t_eq(Interpreter&, const Value& v, Args& a) { return equals(v, first_arg(a)); }
bool t_ne(Interpreter&, const Value& v, Args& a) { return !equals(v, first_arg(a)); }
bool t_lt(Interpreter&, const Value& v, Args& a) { return less_than(v, first_arg(a)); }
bool t_gt(Interpreter&, const Value& v, Args& a) { return less_than(first_arg(a), v); }
bool t_le(Interpreter&, const Value& v, Args& a) { return !less_than(first_arg(a), v); }
bool t_ge(Interpreter&, const Value& v, Args& a) { return !less_than(v, first_arg(a)); }
bool t_odd(Interpreter&, const Value& v, Args&) { return int_value(v) % 2 != 0; }
bool t_even(Interpreter&, const Value& v, Args&) { return int_value(v) % 2 == 0; }
bool t_divisibleby(Interpreter&, const Value& v, Args& a) {
  const int64_t d = int_value(first_arg(a));
  if (d == 0) throw std::runtime_error("integer division or modulo by zero");
  return d == -1 || int_value(v) % d == 0;
}
bool t_lower(Interpreter&, const Value& v, Args&) { const std::string s = to_str(v); return py::lower(s) == s; }
bool t_upper(Interpreter&, const Value& v, Args&) { const std::string s = to_str(v); return py::upper(s) == s; }
bool t_filter(Interpreter&, const Value& v, Args&) { return has_filter(to_str(v)); }
bool t_test(Interpreter&, const Value& v, Args&) { return has_test(to_str(v)); }

const std::map<std::string, TestFn, std::less<>>& tests() {
  static const std::map<std::string, TestFn, std::less<>> table = {
      {"defined", t_defined}, {"undefined", t_undefined}, {"none", t_none}, {"boolean", t_boolean},
      {"true", t_true}, {"false", t_false}, {"integer", t_integer}, {"float", t_float},
      {"number", t_number}, {"string", t_string}, {"mapping", t_mapping}, {"iterable", t_iterable},
      {"sequence", t_sequence}, {"callable", t_callable}, {"escaped", t_escaped}, {"sameas", t_sameas},
      {"in", t_in}, {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq}, {"ne", t_ne}, {"!=", t_ne},
      {"lt", t_lt}, {"lessthan", t_lt}, {"<", t_lt}, {"gt", t_gt}, {"greaterthan", t_gt}, {">", t_gt},
      {"le", t_le}, {"<=", t_le}, {"ge", t_ge}, {">=", t_ge}, {"odd", t_odd}, {"even", t_even},
      {"divisibleby", t_divisibleby}, {"lower", t_lower}, {"upper", t_upper}, {"filter", t_filter},
      {"test", t_test},
  };
  return table;
}

}  // namespace

bool has_test(std::string_view name) { return tests().count(name) != 0; }

bool apply_test(Interpreter& in, std::string_view name, const Value& operand, Args& args) {
  const auto it = tests().find(name);
  if (it == tests().end()) throw std::runtime_error("No test named '" + std::string(name) + "'.");
  return it->second(in, operand, args);
}

}  // namespace seatrt::text::jinja
