#include "interpreter.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "../utf8.hpp"
#include "builtins.hpp"

namespace seatrt::text::jinja {

namespace {
[[noreturn]] void undefined_error(const Value& v) {
  throw std::runtime_error(v.s.empty() ? "value is undefined" : v.s);
}

// A Python-style index into a sequence of `size` items, or -1 when out of range.
int64_t normalize_index(int64_t index, size_t size) {
  const auto n = static_cast<int64_t>(size);
  if (index < 0) index += n;
  return index < 0 || index >= n ? -1 : index;
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    utf8::next_code_point(s, i);
    out.push_back(s.substr(start, i - start));
  }
  return out;
}
}  // namespace

// ---- rendering ------------------------------------------------------------

std::string Interpreter::render(const Node& root, const Dict& globals) {
  auto global_frame = std::make_shared<Frame>();
  for (auto& [k, v] : builtin_globals()) global_frame->vars[k] = v;
  for (const auto& [k, v] : globals) global_frame->vars[k] = v;
  top_ = std::make_shared<Frame>();
  top_->parent = global_frame;
  frame_ = top_;
  exec_body(root.body);
  return std::move(out_);
}

void Interpreter::emit(std::string_view text) {
  if (out_.size() + text.size() > limits_.max_output_bytes)
    throw std::runtime_error("template output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
  out_ += text;
}

void Interpreter::step(int line) {
  if (++steps_ > limits_.max_steps)
    throw TemplateError(line, "template exceeds its execution budget (" + std::to_string(limits_.max_steps) + " steps)");
}

Interpreter::Flow Interpreter::exec_body(const std::vector<NodePtr>& body) {
  for (const auto& node : body) {
    const Flow flow = exec(*node);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

std::string Interpreter::capture(const std::vector<NodePtr>& body) {
  std::string saved = std::move(out_);
  out_.clear();
  try {
    exec_body(body);
  } catch (...) {
    out_ = std::move(saved);
    throw;
  }
  std::string captured = std::move(out_);
  out_ = std::move(saved);
  return captured;
}

Value Interpreter::apply_filters(const std::vector<NodePtr>& filters, Value value) {
  for (const auto& f : filters) {
    Args args = eval_args(f->args);
    try {
      value = apply_filter(*this, f->name, value, args);
    } catch (const TemplateError&) {
      throw;
    } catch (const std::exception& e) {
      throw TemplateError(f->line, e.what());
    }
  }
  return value;
}

Interpreter::Flow Interpreter::exec(const Node& node) {
  step(node.line);
  try {
    switch (node.kind) {
      case NodeKind::Data:
        emit(node.name);
        return Flow::Normal;
      case NodeKind::Output: {
        const Value v = eval(*node.children[0]);
        emit(to_str(v));
        return Flow::Normal;
      }
      case NodeKind::If:
        for (size_t i = 0; i < node.children.size(); ++i)
          if (truthy(eval(*node.children[i]))) return exec_body(node.bodies[i]);
        return exec_body(node.else_body);
      case NodeKind::For:
        exec_for(node);
        return Flow::Normal;
      case NodeKind::Set:
        exec_set(node);
        return Flow::Normal;
      case NodeKind::SetBlock: {
        Value v = Value::string(capture(node.body));
        assign(node.name, apply_filters(node.children, std::move(v)));
        return Flow::Normal;
      }
      case NodeKind::Macro:
        assign(node.name, make_macro(node));
        return Flow::Normal;
      case NodeKind::CallBlock: {
        // The body becomes `caller`, passed to the called macro.
        const Node* block = &node;
        const std::weak_ptr<Frame> defined_in = frame_;
        Value caller = Value::function("caller", [block, defined_in](Interpreter& in, Args& args) {
          auto frame = std::make_shared<Frame>();
          frame->parent = defined_in.lock();
          if (!frame->parent) frame->parent = in.top_;
          for (size_t i = 0; i < block->params.size(); ++i)
            frame->vars[block->params[i]] = i < args.positional.size() ? args.positional[i] : Value::undefined();
          const FramePtr saved = in.frame_;
          in.frame_ = frame;
          std::string text;
          try {
            text = in.capture(block->body);
          } catch (...) {
            in.frame_ = saved;
            throw;
          }
          in.frame_ = saved;
          return Value::string(std::move(text));
        });
        const Node& call = *node.children[0];
        Value callee = eval(*call.children[0]);
        Args args = eval_args(call.args);
        args.keyword.emplace_back("caller", caller);
        emit(to_str(this->call(callee, args)));
        return Flow::Normal;
      }
      case NodeKind::FilterBlock: {
        Value v = Value::string(capture(node.body));
        emit(to_str(apply_filters(node.children, std::move(v))));
        return Flow::Normal;
      }
      case NodeKind::With: {
        auto frame = std::make_shared<Frame>();
        frame->parent = frame_;
        for (size_t i = 0; i < node.targets.size(); ++i) frame->vars[node.targets[i]] = eval(*node.children[i]);
        const FramePtr saved = frame_;
        frame_ = frame;
        Flow flow;
        try {
          flow = exec_body(node.body);
        } catch (...) {
          frame_ = saved;
          throw;
        }
        frame_ = saved;
        return flow;
      }
      case NodeKind::Break: return Flow::Break;
      case NodeKind::Continue: return Flow::Continue;
      default: throw TemplateError(node.line, "internal error: not a statement");
    }
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& e) {
    throw TemplateError(node.line, e.what());
  }
}

void Interpreter::exec_set(const Node& node) {
  Value value = eval(*node.children[0]);
  if (node.children.size() > 1) {  // ns.attr = value
    const Node& target = *node.children[1];
    Value object = eval(*target.children[0]);
    if (object.kind != Value::Kind::Namespace)
      throw std::runtime_error("cannot assign attribute on non-namespace object");
    for (auto& [k, v] : *object.dict) {
      if (k == target.name) {
        v = std::move(value);
        return;
      }
    }
    object.dict->emplace_back(target.name, std::move(value));
    return;
  }
  if (node.targets.size() == 1) {
    assign(node.targets[0], std::move(value));
    return;
  }
  const std::vector<Value> items = iterate(value);
  if (items.size() != node.targets.size())
    throw std::runtime_error("cannot unpack " + std::to_string(items.size()) + " values into " +
                             std::to_string(node.targets.size()) + " names");
  for (size_t i = 0; i < items.size(); ++i) assign(node.targets[i], items[i]);
}

void Interpreter::exec_for(const Node& node) {
  const Value iterable = eval(*node.children[0]);
  std::vector<Value> items = iterate(iterable);
  const FramePtr outer = frame_;
  auto bind = [&](Frame& frame, const Value& item) {
    if (node.targets.size() == 1) {
      frame.vars[node.targets[0]] = item;
      return;
    }
    const std::vector<Value> parts = item.is_list() ? *item.list : iterate(item);
    if (parts.size() != node.targets.size())
      throw std::runtime_error("cannot unpack " + std::to_string(parts.size()) + " values into " +
                               std::to_string(node.targets.size()) + " loop variables");
    for (size_t k = 0; k < parts.size(); ++k) frame.vars[node.targets[k]] = parts[k];
  };
  // `for x in xs if cond`: filter first, so loop.length/last see the filtered items.
  if (node.children[1]) {
    std::vector<Value> kept;
    for (const Value& item : items) {
      auto frame = std::make_shared<Frame>();
      frame->parent = outer;
      bind(*frame, item);
      frame_ = frame;
      bool keep = false;
      try {
        keep = truthy(eval(*node.children[1]));
      } catch (...) {
        frame_ = outer;
        throw;
      }
      frame_ = outer;
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec_body(node.else_body);
    return;
  }
  const auto length = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < length; ++i) {
    step(node.line);
    auto frame = std::make_shared<Frame>();
    frame->parent = outer;
    bind(*frame, items[static_cast<size_t>(i)]);
    Dict loop{
        {"index", Value::integer(i + 1)},
        {"index0", Value::integer(i)},
        {"revindex", Value::integer(length - i)},
        {"revindex0", Value::integer(length - i - 1)},
        {"first", Value::boolean(i == 0)},
        {"last", Value::boolean(i == length - 1)},
        {"length", Value::integer(length)},
        {"depth", Value::integer(1)},
        {"depth0", Value::integer(0)},
        {"previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item")},
        {"nextitem", i + 1 < length ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item")},
        {"cycle", Value::function("loop.cycle", [i](Interpreter&, Args& args) {
           if (args.positional.empty()) throw std::runtime_error("no items for cycling given");
           return args.positional[static_cast<size_t>(i) % args.positional.size()];
         })},
    };
    Value loop_value = Value::from_dict(std::move(loop));
    loop_value.kind = Value::Kind::Namespace;  // attribute access only; prints as an object
    frame->vars["loop"] = loop_value;
    frame_ = frame;
    Flow flow;
    try {
      flow = exec_body(node.body);
    } catch (...) {
      frame_ = outer;
      throw;
    }
    frame_ = outer;
    if (flow == Flow::Break) break;
  }
}

Value Interpreter::make_macro(const Node& node) {
  const Node* macro = &node;
  // Weak: the macro is usually stored in the frame it was defined in, and a
  // strong reference would make a cycle.
  const std::weak_ptr<Frame> defined_in = frame_;
  return Value::function(node.name, [macro, defined_in](Interpreter& in, Args& args) {
    if (in.call_depth_ >= in.limits_.max_call_depth)
      throw std::runtime_error("maximum macro recursion depth (" + std::to_string(in.limits_.max_call_depth) + ") exceeded");
    auto frame = std::make_shared<Frame>();
    frame->parent = defined_in.lock();
    if (!frame->parent) frame->parent = in.top_;
    const auto& params = macro->params;
    std::vector<Value> varargs;
    for (size_t i = 0; i < args.positional.size(); ++i) {
      if (i < params.size()) frame->vars[params[i]] = args.positional[i];
      else varargs.push_back(args.positional[i]);
    }
    Dict kwargs;
    Value caller = Value::undefined("'caller' is undefined");
    for (auto& [key, value] : args.keyword) {
      bool is_param = false;
      for (const auto& p : params) is_param = is_param || p == key;
      if (is_param) frame->vars[key] = value;
      else if (key == "caller") caller = value;
      else kwargs.emplace_back(key, value);
    }
    frame->vars["varargs"] = Value::from_list(std::move(varargs), true);
    frame->vars["kwargs"] = Value::from_dict(std::move(kwargs));
    frame->vars["caller"] = caller;
    const FramePtr saved = in.frame_;
    in.frame_ = frame;
    ++in.call_depth_;
    std::string text;
    try {
      // Defaults are evaluated at call time, inside the macro's scope.
      for (const auto& p : params) {
        if (frame->vars.count(p)) continue;
        Value dflt = Value::undefined("'" + p + "' is undefined");
        for (const auto& [k, expr] : macro->args.keyword)
          if (k == p) dflt = in.eval(*expr);
        frame->vars[p] = dflt;
      }
      text = in.capture(macro->body);
    } catch (...) {
      in.frame_ = saved;
      --in.call_depth_;
      throw;
    }
    in.frame_ = saved;
    --in.call_depth_;
    return Value::string(std::move(text));
  });
}

// ---- expressions ------------------------------------------------------------

Value Interpreter::lookup(const std::string& name) const {
  for (const Frame* f = frame_.get(); f != nullptr; f = f->parent.get()) {
    const auto it = f->vars.find(name);
    if (it != f->vars.end()) return it->second;
  }
  return Value::undefined("'" + name + "' is undefined");
}

Args Interpreter::eval_args(const Arguments& args) {
  Args out;
  for (const auto& p : args.positional) out.positional.push_back(eval(*p));
  for (const auto& [k, v] : args.keyword) out.keyword.emplace_back(k, eval(*v));
  return out;
}

Value Interpreter::eval(const Node& node) {
  try {
    return eval_inner(node);
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& e) {
    throw TemplateError(node.line, e.what());
  }
}

Value Interpreter::eval_inner(const Node& node) {
  switch (node.kind) {
    case NodeKind::Literal: return node.value;
    case NodeKind::Name: return lookup(node.name);
    case NodeKind::ListLit:
    case NodeKind::TupleLit: {
      List items;
      for (const auto& c : node.children) items.push_back(eval(*c));
      return Value::from_list(std::move(items), node.kind == NodeKind::TupleLit);
    }
    case NodeKind::DictLit: {
      Dict items;
      for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
        const Value key = eval(*node.children[i]);
        if (!key.is_string()) throw std::runtime_error("dict keys must be strings here, got " + type_name(key));
        Value value = eval(*node.children[i + 1]);
        bool replaced = false;
        for (auto& [k, v] : items)
          if (k == key.s) {
            v = value;
            replaced = true;
          }
        if (!replaced) items.emplace_back(key.s, std::move(value));
      }
      return Value::from_dict(std::move(items));
    }
    case NodeKind::GetAttr: return getattr(eval(*node.children[0]), node.name);
    case NodeKind::GetItem: return getitem(eval(*node.children[0]), eval(*node.children[1]));
    case NodeKind::Slice: {
      const Value object = eval(*node.children[0]);
      if (object.is_undefined()) undefined_error(object);
      auto bound = [&](int k) -> std::optional<int64_t> {
        if (!node.children[static_cast<size_t>(k)]) return std::nullopt;
        const Value v = eval(*node.children[static_cast<size_t>(k)]);
        if (v.is_none()) return std::nullopt;
        if (v.kind != Value::Kind::Int && v.kind != Value::Kind::Bool)
          throw std::runtime_error("slice indices must be integers or None");
        return v.kind == Value::Kind::Int ? v.i : (v.b ? 1 : 0);
      };
      const auto start = bound(1), stop = bound(2), stride = bound(3);
      const int64_t st = stride.value_or(1);
      if (st == 0) throw std::runtime_error("slice step cannot be zero");
      std::vector<Value> items;
      std::vector<std::string> chars;
      bool is_string = object.is_string();
      if (is_string) chars = code_points(object.s);
      else if (object.is_list()) items = *object.list;
      else throw std::runtime_error("'" + type_name(object) + "' object is not subscriptable");
      const auto n = static_cast<int64_t>(is_string ? chars.size() : items.size());
      auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
        if (!v) return dflt;
        int64_t x = *v;
        if (x < 0) x += n;
        if (st > 0) return std::clamp<int64_t>(x, 0, n);
        return std::clamp<int64_t>(x, -1, n - 1);
      };
      const int64_t from = clamp(start, st > 0 ? 0 : n - 1);
      const int64_t to = clamp(stop, st > 0 ? n : -1);
      std::string s;
      List out;
      for (int64_t i = from; st > 0 ? i < to : i > to; i += st) {
        if (is_string) s += chars[static_cast<size_t>(i)];
        else out.push_back(items[static_cast<size_t>(i)]);
      }
      return is_string ? Value::string(std::move(s)) : Value::from_list(std::move(out), object.is_tuple);
    }
    case NodeKind::Call: {
      const Value callee = eval(*node.children[0]);
      Args args = eval_args(node.args);
      return call(callee, args);
    }
    case NodeKind::Filter: {
      const Value operand = eval(*node.children[0]);
      Args args = eval_args(node.args);
      return apply_filter(*this, node.name, operand, args);
    }
    case NodeKind::Test: {
      const Value operand = eval(*node.children[0]);
      Args args = eval_args(node.args);
      return Value::boolean(apply_test(*this, node.name, operand, args) != node.negated);
    }
    case NodeKind::Unary: {
      const Value v = eval(*node.children[0]);
      if (node.name == "not") return Value::boolean(!truthy(v));
      if (v.is_undefined()) undefined_error(v);
      if (node.name == "+") {
        if (!v.is_number()) throw std::runtime_error("bad operand type for unary +: '" + type_name(v) + "'");
        return v.kind == Value::Kind::Bool ? Value::integer(v.b ? 1 : 0) : v;
      }
      if (v.kind == Value::Kind::Float) return Value::number(-v.f);
      if (v.kind == Value::Kind::Int) {
        if (v.i == INT64_MIN) throw std::runtime_error("integer overflow");
        return Value::integer(-v.i);
      }
      if (v.kind == Value::Kind::Bool) return Value::integer(v.b ? -1 : 0);
      throw std::runtime_error("bad operand type for unary -: '" + type_name(v) + "'");
    }
    case NodeKind::Binary: return eval_binary(node);
    case NodeKind::Compare: return eval_compare(node);
    case NodeKind::Conditional:
      if (truthy(eval(*node.children[1]))) return eval(*node.children[0]);
      return node.children[2] ? eval(*node.children[2]) : Value::undefined("the inline if had no else");
    default: throw std::runtime_error("internal error: not an expression");
  }
}

Value Interpreter::eval_binary(const Node& node) {
  const std::string& op = node.name;
  const Value a = eval(*node.children[0]);
  if (op == "and") return truthy(a) ? eval(*node.children[1]) : a;
  if (op == "or") return truthy(a) ? a : eval(*node.children[1]);
  const Value b = eval(*node.children[1]);
  if (op == "~") return Value::string(to_str(a) + to_str(b));
  return arithmetic(op, a, b);
}

Value Interpreter::eval_compare(const Node& node) {
  Value left = eval(*node.children[0]);
  for (size_t i = 0; i < node.ops.size(); ++i) {
    Value right = eval(*node.children[i + 1]);
    const std::string& op = node.ops[i];
    bool ok;
    if (op == "==") ok = equals(left, right);
    else if (op == "!=") ok = !equals(left, right);
    else if (op == "in") ok = contains(right, left);
    else if (op == "notin") ok = !contains(right, left);
    else {
      if (left.is_undefined()) undefined_error(left);
      if (right.is_undefined()) undefined_error(right);
      if (op == "<") ok = less_than(left, right);
      else if (op == ">") ok = less_than(right, left);
      else if (op == "<=") ok = !less_than(right, left);
      else ok = !less_than(left, right);
    }
    if (!ok) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Value Interpreter::call(const Value& callee, Args& args) {
  if (callee.is_undefined()) undefined_error(callee);
  if (callee.kind != Value::Kind::Callable) throw std::runtime_error("'" + type_name(callee) + "' object is not callable");
  return callee.fn->fn(*this, args);
}

Value Interpreter::getattr(const Value& object, const std::string& name) {
  if (object.is_undefined()) undefined_error(object);
  if (object.kind == Value::Kind::Mapping) {
    Value method = bound_method(object, name);
    if (!method.is_undefined()) return method;
  }
  if (const Value* v = object.find(name)) return *v;
  if (object.kind != Value::Kind::Mapping) {
    Value method = bound_method(object, name);
    if (!method.is_undefined()) return method;
  }
  return Value::undefined("'" + (object.is_dict() ? std::string("dict") : type_name(object)) +
                          " object' has no attribute '" + name + "'");
}

Value Interpreter::getitem(const Value& object, const Value& key) {
  if (object.is_undefined()) undefined_error(object);
  if (key.is_string()) {
    if (object.kind == Value::Kind::Mapping) {
      if (const Value* v = object.find(key.s)) return *v;
    }
    return getattr(object, key.s);  // jinja2 falls back to the attribute
  }
  if (key.kind == Value::Kind::Int || key.kind == Value::Kind::Bool) {
    const int64_t index = key.kind == Value::Kind::Int ? key.i : (key.b ? 1 : 0);
    if (object.is_list()) {
      const int64_t i = normalize_index(index, object.list->size());
      if (i >= 0) return (*object.list)[static_cast<size_t>(i)];
    } else if (object.is_string()) {
      const auto chars = code_points(object.s);
      const int64_t i = normalize_index(index, chars.size());
      if (i >= 0) return Value::string(chars[static_cast<size_t>(i)]);
    }
  }
  return Value::undefined("'" + type_name(object) + " object' has no attribute '" + to_str(key) + "'");
}

std::vector<Value> Interpreter::iterate(const Value& value) {
  switch (value.kind) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::Sequence: return *value.list;
    case Value::Kind::Mapping: {
      std::vector<Value> keys;
      for (const auto& [k, v] : *value.dict) keys.push_back(Value::string(k));
      return keys;
    }
    case Value::Kind::String: {
      std::vector<Value> chars;
      for (auto& c : code_points(value.s)) chars.push_back(Value::string(std::move(c)));
      return chars;
    }
    default: throw std::runtime_error("'" + type_name(value) + "' object is not iterable");
  }
}

// ---- arithmetic ---------------------------------------------------------------

namespace {
int64_t int_of(const Value& v) { return v.kind == Value::Kind::Int ? v.i : (v.b ? 1 : 0); }
double float_of(const Value& v) { return v.kind == Value::Kind::Float ? v.f : static_cast<double>(int_of(v)); }

Value repeat(const Value& seq, int64_t times) {
  if (times < 0) times = 0;
  const size_t unit = seq.is_string() ? seq.s.size() : seq.list->size();
  if (unit != 0 && static_cast<uint64_t>(times) > (64u << 20) / unit) throw std::runtime_error("repetition result is too large");
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += seq.s;
    return Value::string(std::move(out));
  }
  List out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.list->begin(), seq.list->end());
  return Value::from_list(std::move(out), seq.is_tuple);
}
}  // namespace

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  const bool nums = a.is_number() && b.is_number();
  const bool ints = nums && a.kind != Value::Kind::Float && b.kind != Value::Kind::Float;
  auto unsupported = [&]() -> Value {
    throw std::runtime_error("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
  };
  int64_t r = 0;
  if (op == "+") {
    if (ints) {
      if (__builtin_add_overflow(int_of(a), int_of(b), &r)) throw std::runtime_error("integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::number(float_of(a) + float_of(b));
    if (a.is_string() && b.is_string()) return Value::string(a.s + b.s);
    if (a.is_list() && b.is_list() && a.is_tuple == b.is_tuple) {
      List out = *a.list;
      out.insert(out.end(), b.list->begin(), b.list->end());
      return Value::from_list(std::move(out), a.is_tuple);
    }
    return unsupported();
  }
  if (op == "-") {
    if (ints) {
      if (__builtin_sub_overflow(int_of(a), int_of(b), &r)) throw std::runtime_error("integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::number(float_of(a) - float_of(b));
    return unsupported();
  }
  if (op == "*") {
    if (ints) {
      if (__builtin_mul_overflow(int_of(a), int_of(b), &r)) throw std::runtime_error("integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::number(float_of(a) * float_of(b));
    if ((a.is_string() || a.is_list()) && (b.kind == Value::Kind::Int || b.kind == Value::Kind::Bool)) return repeat(a, int_of(b));
    if ((b.is_string() || b.is_list()) && (a.kind == Value::Kind::Int || a.kind == Value::Kind::Bool)) return repeat(b, int_of(a));
    return unsupported();
  }
  if (!nums) {
    if (op == "%" && a.is_string()) throw std::runtime_error("printf-style string formatting ('%') is not supported");
    return unsupported();
  }
  if (op == "/") {
    if (float_of(b) == 0) throw std::runtime_error("division by zero");
    return Value::number(float_of(a) / float_of(b));
  }
  if (op == "//" || op == "%") {
    if (float_of(b) == 0) throw std::runtime_error(op == "//" ? "integer division or modulo by zero" : "modulo by zero");
    if (ints) {
      const int64_t x = int_of(a), y = int_of(b);
      if (x == INT64_MIN && y == -1) throw std::runtime_error("integer overflow");
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value::integer(op == "//" ? q : m);
    }
    const double x = float_of(a), y = float_of(b);
    double m = std::fmod(x, y);
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    return Value::number(op == "//" ? std::floor(x / y) : m);
  }
  if (op == "**") {
    if (ints && int_of(b) >= 0) {  // exponentiation by squaring, overflow-checked
      int64_t result = 1, base = int_of(a);
      for (int64_t e = int_of(b); e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(result, base, &result)) throw std::runtime_error("integer overflow");
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) throw std::runtime_error("integer overflow");
      }
      return Value::integer(result);
    }
    return Value::number(std::pow(float_of(a), float_of(b)));
  }
  return unsupported();
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind) {
    case Value::Kind::Undefined: return false;
    case Value::Kind::String:
      if (!item.is_string()) throw std::runtime_error("'in <string>' requires string as left operand, not " + type_name(item));
      return container.s.find(item.s) != std::string::npos;
    case Value::Kind::Sequence:
      for (const auto& v : *container.list)
        if (equals(v, item)) return true;
      return false;
    case Value::Kind::Mapping:
      return item.is_string() && container.find(item.s) != nullptr;
    default: throw std::runtime_error("argument of type '" + type_name(container) + "' is not iterable");
  }
}

}  // namespace seatrt::text::jinja
