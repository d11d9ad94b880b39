// The Jinja syntax tree: one node type with a kind tag (the interpreter
// switches on it).  Expressions and statements share the struct; each kind
// documents which fields it uses.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seatrt/text/jinja/value.hpp"

namespace seatrt::text::jinja {

struct Node;
using NodePtr = std::shared_ptr<Node>;

enum class NodeKind {
  // Expressions.
  Literal,      // value
  Name,         // name
  ListLit,      // children = items
  TupleLit,     // children = items
  DictLit,      // children = key0, value0, key1, value1, ...
  GetAttr,      // children[0] = object, name = attribute
  GetItem,      // children[0] = object, children[1] = key
  Slice,        // children[0] = object, children[1..3] = start/stop/step (nullptr when absent)
  Call,         // children[0] = callee, args
  Filter,       // children[0] = operand (nullptr inside {% filter %}), name, args
  Test,         // children[0] = operand, name, args, negated
  Unary,        // name = "-", "+", "not"; children[0]
  Binary,       // name = operator (+ - * / // % ** ~ and or); children[0..1]
  Compare,      // children[0] = first operand, ops[i] with children[i + 1]
  Conditional,  // children = then, condition, otherwise (otherwise may be nullptr)
  // Statements.
  Template,     // body
  Data,         // name = text
  Output,       // children[0] = expression
  If,           // children = conditions, bodies = one per condition, else_body
  For,          // targets, children[0] = iterable, children[1] = filter condition or nullptr, body, else_body
  Set,          // targets (or children[1] = GetAttr target), children[0] = value
  SetBlock,     // name, children = filters (Filter nodes with no operand), body
  Macro,        // name, params + defaults in args, body
  CallBlock,    // children[0] = Call expression, params (caller's), body
  FilterBlock,  // children = filters, body
  With,         // targets, children = values, body
  Break,
  Continue,
};

struct Arguments {
  std::vector<NodePtr> positional;
  std::vector<std::pair<std::string, NodePtr>> keyword;
};

struct Node {
  NodeKind kind;
  int line = 0;
  std::string name;
  Value value;
  bool negated = false;
  std::vector<NodePtr> children;
  std::vector<std::string> ops;      // Compare operators
  std::vector<std::string> targets;  // For / Set / With names
  Arguments args;                    // Call / Filter / Test arguments; Macro parameters (keyword = defaults)
  std::vector<std::string> params;   // Macro / CallBlock parameter names in order
  std::vector<NodePtr> body;
  std::vector<std::vector<NodePtr>> bodies;  // If branches
  std::vector<NodePtr> else_body;

  Node(NodeKind k, int l) : kind(k), line(l) {}
};

inline NodePtr make_node(NodeKind kind, int line) { return std::make_shared<Node>(kind, line); }

}  // namespace seatrt::text::jinja
