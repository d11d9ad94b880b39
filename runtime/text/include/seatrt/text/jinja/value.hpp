// Values of the Jinja engine, with Python's semantics: None, bool, int,
// float (printed as Python prints them), str, list/tuple, insertion-ordered
// dict, callables, namespace() objects and Jinja's Undefined.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seatrt::text::jinja {

struct Value;
class Interpreter;

using List = std::vector<Value>;
// Insertion-ordered string-keyed mapping (what JSON objects and Python dicts are).
using Dict = std::vector<std::pair<std::string, Value>>;

// Positional and keyword arguments of a call.
struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

using NativeFn = std::function<Value(Interpreter&, Args&)>;

struct Callable {
  std::string name;
  NativeFn fn;
};

struct Value {
  // Sequence = list or tuple; Mapping = dict.
  enum class Kind { Undefined, None, Bool, Int, Float, String, Sequence, Mapping, Callable, Namespace };

  Kind kind = Kind::Undefined;
  bool b = false;
  bool is_tuple = false;  // a List that prints as a tuple
  int64_t i = 0;
  double f = 0;
  std::string s;  // String; for Undefined, why it is undefined ("'x' is undefined")
  std::shared_ptr<List> list;
  std::shared_ptr<Dict> dict;  // Dict and Namespace (a namespace is mutable, shared)
  std::shared_ptr<Callable> fn;

  static Value undefined(std::string why = {}) {
    Value v;
    v.s = std::move(why);
    return v;
  }
  static Value none() { return make(Kind::None); }
  static Value boolean(bool x) {
    Value v = make(Kind::Bool);
    v.b = x;
    return v;
  }
  static Value integer(int64_t x) {
    Value v = make(Kind::Int);
    v.i = x;
    return v;
  }
  static Value number(double x) {
    Value v = make(Kind::Float);
    v.f = x;
    return v;
  }
  static Value string(std::string x) {
    Value v = make(Kind::String);
    v.s = std::move(x);
    return v;
  }
  static Value from_list(List items, bool tuple = false) {
    Value v = make(Kind::Sequence);
    v.list = std::make_shared<List>(std::move(items));
    v.is_tuple = tuple;
    return v;
  }
  static Value from_dict(Dict items) {
    Value v = make(Kind::Mapping);
    v.dict = std::make_shared<Dict>(std::move(items));
    return v;
  }
  static Value namespace_of(Dict items) {
    Value v = from_dict(std::move(items));
    v.kind = Kind::Namespace;
    return v;
  }
  static Value function(std::string name, NativeFn fn) {
    Value v = make(Kind::Callable);
    v.fn = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
    return v;
  }

  bool is_undefined() const { return kind == Kind::Undefined; }
  bool is_none() const { return kind == Kind::None; }
  bool is_string() const { return kind == Kind::String; }
  bool is_list() const { return kind == Kind::Sequence; }
  bool is_dict() const { return kind == Kind::Mapping; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }

  // Dict lookup (nullptr when absent or not a dict/namespace).
  const Value* find(std::string_view key) const;

 private:
  static Value make(Kind k) {
    Value v;
    v.kind = k;
    return v;
  }
};

// Python semantics.
bool truthy(const Value& v);
bool equals(const Value& a, const Value& b);
// a < b, or throws std::runtime_error for unorderable types.
bool less_than(const Value& a, const Value& b);
std::string type_name(const Value& v);  // Python type name: 'str', 'int', ...
std::string to_str(const Value& v);     // str(v); Undefined -> ""
std::string to_repr(const Value& v);    // repr(v)
std::string float_repr(double x);       // repr(float)

}  // namespace seatrt::text::jinja
