// The global functions every render sees: range, namespace, dict,
// raise_exception (transformers) and strftime_now (transformers).
#include <ctime>
#include <stdexcept>

#include "args.hpp"
#include "builtins.hpp"
#include "interpreter.hpp"

namespace seatrt::text::jinja {

namespace {
constexpr int64_t kMaxRange = 100000;  // jinja2's sandbox limit

Value range_fn(Interpreter&, Args& a) {
  int64_t start = 0, stop = 0, step = 1;
  auto num = [](const Value& v) {
    if (v.kind == Value::Kind::Int) return v.i;
    if (v.kind == Value::Kind::Bool) return static_cast<int64_t>(v.b);
    throw std::runtime_error("'" + type_name(v) + "' object cannot be interpreted as an integer");
  };
  const auto& p = a.positional;
  if (p.size() == 1) {
    stop = num(p[0]);
  } else if (p.size() == 2 || p.size() == 3) {
    start = num(p[0]);
    stop = num(p[1]);
    if (p.size() == 3) step = num(p[2]);
  } else {
    throw std::runtime_error("range expected 1 to 3 arguments, got " + std::to_string(p.size()));
  }
  if (step == 0) throw std::runtime_error("range() arg 3 must not be zero");
  List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<int64_t>(out.size()) >= kMaxRange)
      throw std::runtime_error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    out.push_back(Value::integer(i));
    if ((step > 0 && i > INT64_MAX - step) || (step < 0 && i < INT64_MIN - step)) break;
  }
  return Value::from_list(std::move(out));
}

Dict keyword_dict(const Args& a) {
  Dict d;
  for (const auto& p : a.positional) {
    if (p.kind != Value::Kind::Mapping) throw std::runtime_error("expected a mapping as positional argument");
    for (const auto& kv : *p.dict) d.push_back(kv);
  }
  for (const auto& [k, v] : a.keyword) {
    bool replaced = false;
    for (auto& [dk, dv] : d)
      if (dk == k) {
        dv = v;
        replaced = true;
      }
    if (!replaced) d.emplace_back(k, v);
  }
  return d;
}
}  // namespace

Dict builtin_globals() {
  static const Dict globals = {
      {"range", Value::function("range", range_fn)},
      {"namespace", Value::function("namespace", [](Interpreter&, Args& a) { return Value::namespace_of(keyword_dict(a)); })},
      {"dict", Value::function("dict", [](Interpreter&, Args& a) { return Value::from_dict(keyword_dict(a)); })},
      {"raise_exception", Value::function("raise_exception", [](Interpreter&, Args& a) -> Value {
         throw std::runtime_error(a.positional.empty() ? std::string("raise_exception() called") : to_str(a.positional[0]));
       })},
      {"strftime_now", Value::function("strftime_now", [](Interpreter&, Args& a) {
         const std::string format = str_arg(a, 0, "format", "%Y-%m-%d");
         const std::time_t now = std::time(nullptr);
         std::tm local{};
         localtime_r(&now, &local);
         char buf[256];
         const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &local);
         return Value::string(std::string(buf, n));
       })},
  };
  return globals;
}

}  // namespace seatrt::text::jinja
