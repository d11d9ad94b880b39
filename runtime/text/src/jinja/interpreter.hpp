// Executes a Jinja syntax tree with Python/jinja2 semantics: scoping (loops
// and macros get their own frames, `if` does not), Undefined, loop.*,
// namespace(), macros with defaults, and the resource limits.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "ast.hpp"
#include "seatrt/text/jinja/template.hpp"

namespace seatrt::text::jinja {

struct Frame {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Frame> parent;
};
using FramePtr = std::shared_ptr<Frame>;

class Interpreter {
 public:
  explicit Interpreter(const Limits& limits) : limits_(limits) {}

  std::string render(const Node& root, const Dict& globals);

  // Used by the built-ins.
  Value call(const Value& callee, Args& args);
  Value getattr(const Value& object, const std::string& name);
  Value getitem(const Value& object, const Value& key);
  // The items a for loop (or a filter) iterates: list items, dict keys,
  // string characters; Undefined is empty.
  std::vector<Value> iterate(const Value& value);

 private:
  enum class Flow { Normal, Break, Continue };

  Flow exec_body(const std::vector<NodePtr>& body);
  Flow exec(const Node& node);
  Value eval(const Node& node);
  Value eval_inner(const Node& node);
  Value eval_binary(const Node& node);
  Value eval_compare(const Node& node);
  Args eval_args(const Arguments& args);
  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value value) { frame_->vars[name] = std::move(value); }
  void exec_for(const Node& node);
  void exec_set(const Node& node);
  Value make_macro(const Node& node);
  std::string capture(const std::vector<NodePtr>& body);
  Value apply_filters(const std::vector<NodePtr>& filters, Value value);
  void emit(std::string_view text);
  void step(int line);

  Limits limits_;
  std::string out_;
  FramePtr frame_;
  FramePtr top_;  // template-level frame (macros defined here see each other)
  uint64_t steps_ = 0;
  int call_depth_ = 0;
};

// Python binary arithmetic on values (+ - * / // % **); throws std::runtime_error.
Value arithmetic(const std::string& op, const Value& a, const Value& b);
// `item in container`.
bool contains(const Value& container, const Value& item);

}  // namespace seatrt::text::jinja
