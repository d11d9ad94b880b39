#include "parser.hpp"

#include <charconv>
#include <cstdlib>
#include <set>

#include "builtins.hpp"

namespace seatrt::text::jinja {

namespace {

constexpr int kMaxDepth = 200;

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : t_(tokens) {}

  NodePtr parse_template() {
    auto root = make_node(NodeKind::Template, 1);
    std::string end;
    root->body = parse_body({}, end);
    return root;
  }

 private:
  // ---- token helpers ----
  const Token& peek(size_t ahead = 0) const {
    return t_[std::min(pos_ + ahead, t_.size() - 1)];
  }
  const Token& next() {
    const Token& tok = peek();
    if (pos_ < t_.size() - 1) ++pos_;
    return tok;
  }
  bool at_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::Operator && peek(ahead).text == op;
  }
  bool at_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::Name && peek(ahead).text == name;
  }
  bool skip_op(const char* op) {
    if (!at_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* name) {
    if (!at_name(name)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const std::string& message) const { throw TemplateError(peek().line, message); }
  static std::string describe(const Token& tok) {
    switch (tok.type) {
      case TokenType::BlockEnd: return "end of statement block";
      case TokenType::VarEnd: return "end of print statement";
      case TokenType::End: return "end of template";
      case TokenType::Data: return "template data";
      default: return "'" + tok.text + "'";
    }
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(std::string("expected '") + op + "', got " + describe(peek()));
  }
  std::string expect_name() {
    if (peek().type != TokenType::Name) fail("expected a name, got " + describe(peek()));
    return next().text;
  }
  void expect_block_end() {
    if (peek().type != TokenType::BlockEnd) fail("expected end of statement block, got " + describe(peek()));
    next();
  }
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxDepth) parser.fail("template nesting is too deep");
    }
    ~DepthGuard() { --parser.depth_; }
    Parser& parser;
  };

  // ---- statements ----

  // Parses until a block tag named in `ends` (consumed, its name stored in
  // `end`; the tag's block end is NOT consumed) or the end of the template.
  std::vector<NodePtr> parse_body(const std::set<std::string>& ends, std::string& end) {
    DepthGuard guard(*this);
    std::vector<NodePtr> body;
    while (true) {
      const Token& tok = peek();
      if (tok.type == TokenType::End) {
        if (!ends.empty()) {
          std::string list;
          for (const auto& e : ends) list += (list.empty() ? "'" : " or '") + e + "'";
          fail("unexpected end of template; expected " + list);
        }
        return body;
      }
      if (tok.type == TokenType::Data) {
        auto node = make_node(NodeKind::Data, tok.line);
        node->name = tok.text;
        body.push_back(node);
        next();
      } else if (tok.type == TokenType::VarBegin) {
        next();
        auto node = make_node(NodeKind::Output, tok.line);
        node->children.push_back(parse_tuple_expression());
        if (peek().type != TokenType::VarEnd) fail("expected end of print statement, got " + describe(peek()));
        next();
        body.push_back(node);
      } else if (tok.type == TokenType::BlockBegin) {
        next();
        const Token& name = peek();
        if (name.type != TokenType::Name) fail("expected a statement name, got " + describe(name));
        if (ends.count(name.text)) {
          end = name.text;
          next();
          return body;
        }
        if (NodePtr stmt = parse_statement()) body.push_back(stmt);
      } else {
        fail("unexpected " + describe(tok));
      }
    }
  }

  NodePtr parse_statement() {
    const Token& tok = next();
    const std::string& name = tok.text;
    const int line = tok.line;
    if (name == "if") return parse_if(line);
    if (name == "for") return parse_for(line);
    if (name == "set") return parse_set(line);
    if (name == "macro") return parse_macro(line);
    if (name == "call") return parse_call_block(line);
    if (name == "filter") return parse_filter_block(line);
    if (name == "with") return parse_with(line);
    if (name == "generation") {  // transformers' AssistantTracker: renders its body
      expect_block_end();
      std::string end;
      auto node = make_node(NodeKind::FilterBlock, line);
      node->body = parse_body({"endgeneration"}, end);
      expect_block_end();
      return node;
    }
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) throw TemplateError(line, "'" + name + "' outside of a loop");
      expect_block_end();
      return make_node(name == "break" ? NodeKind::Break : NodeKind::Continue, line);
    }
    throw TemplateError(line, "Encountered unknown tag '" + name + "'.");
  }

  NodePtr parse_if(int line) {
    auto node = make_node(NodeKind::If, line);
    while (true) {
      node->children.push_back(parse_tuple_expression());
      expect_block_end();
      std::string end;
      node->bodies.push_back(parse_body({"elif", "else", "endif"}, end));
      if (end == "elif") continue;
      if (end == "else") {
        expect_block_end();
        node->else_body = parse_body({"endif"}, end);
      }
      expect_block_end();
      return node;
    }
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = skip_op("(");
    do {
      names.push_back(expect_name());
    } while (skip_op(","));
    if (paren) expect_op(")");
    return names;
  }

  NodePtr parse_for(int line) {
    auto node = make_node(NodeKind::For, line);
    node->targets = parse_targets();
    if (!skip_name("in")) fail("expected 'in', got " + describe(peek()));
    node->children.push_back(parse_tuple_expression(/*no_condition=*/true));
    node->children.push_back(skip_name("if") ? parse_tuple_expression() : nullptr);
    if (skip_name("recursive")) throw TemplateError(line, "recursive for loops are not supported");
    expect_block_end();
    ++loop_depth_;
    std::string end;
    node->body = parse_body({"else", "endfor"}, end);
    --loop_depth_;
    if (end == "else") {
      expect_block_end();
      const int saved = loop_depth_;
      loop_depth_ = 0;  // break/continue in a for's else belong to no loop
      node->else_body = parse_body({"endfor"}, end);
      loop_depth_ = saved;
    }
    expect_block_end();
    return node;
  }

  NodePtr parse_set(int line) {
    // {% set ns.attr = v %}, {% set a, b = v %}, {% set a = v %}, {% set a | f %}...{% endset %}
    if (peek().type == TokenType::Name && at_op(".", 1)) {
      auto node = make_node(NodeKind::Set, line);
      auto target = make_node(NodeKind::GetAttr, line);
      auto object = make_node(NodeKind::Name, line);
      object->name = expect_name();
      next();  // '.'
      target->name = expect_name();
      target->children.push_back(object);
      expect_op("=");
      node->children.push_back(parse_tuple_expression());
      node->children.push_back(target);
      expect_block_end();
      return node;
    }
    std::vector<std::string> targets = parse_targets();
    if (skip_op("=")) {
      auto node = make_node(NodeKind::Set, line);
      node->targets = std::move(targets);
      node->children.push_back(parse_tuple_expression());
      expect_block_end();
      return node;
    }
    if (targets.size() != 1) fail("expected '='");
    auto node = make_node(NodeKind::SetBlock, line);
    node->name = targets[0];
    while (skip_op("|")) node->children.push_back(parse_filter_call(nullptr));
    expect_block_end();
    std::string end;
    node->body = parse_body({"endset"}, end);
    expect_block_end();
    return node;
  }

  // (a, b=default, ...) for macros and call blocks.
  void parse_params(Node& node) {
    expect_op("(");
    while (!at_op(")")) {
      const std::string param = expect_name();
      node.params.push_back(param);
      if (skip_op("=")) node.args.keyword.emplace_back(param, parse_expression());
      if (!skip_op(",")) break;
    }
    expect_op(")");
  }

  NodePtr parse_macro(int line) {
    auto node = make_node(NodeKind::Macro, line);
    node->name = expect_name();
    parse_params(*node);
    expect_block_end();
    const int saved = loop_depth_;
    loop_depth_ = 0;
    std::string end;
    node->body = parse_body({"endmacro"}, end);
    loop_depth_ = saved;
    if (peek().type == TokenType::Name) next();  // {% endmacro name %}
    expect_block_end();
    return node;
  }

  NodePtr parse_call_block(int line) {
    auto node = make_node(NodeKind::CallBlock, line);
    if (at_op("(")) parse_params(*node);
    NodePtr call = parse_expression();
    if (call->kind != NodeKind::Call) throw TemplateError(line, "expected a call after {% call %}");
    node->children.push_back(call);
    expect_block_end();
    std::string end;
    node->body = parse_body({"endcall"}, end);
    expect_block_end();
    return node;
  }

  NodePtr parse_filter_block(int line) {
    auto node = make_node(NodeKind::FilterBlock, line);
    do {
      node->children.push_back(parse_filter_call(nullptr));
    } while (skip_op("|"));
    expect_block_end();
    std::string end;
    node->body = parse_body({"endfilter"}, end);
    expect_block_end();
    return node;
  }

  NodePtr parse_with(int line) {
    auto node = make_node(NodeKind::With, line);
    while (peek().type == TokenType::Name) {
      node->targets.push_back(expect_name());
      expect_op("=");
      node->children.push_back(parse_expression());
      if (!skip_op(",")) break;
    }
    expect_block_end();
    std::string end;
    node->body = parse_body({"endwith"}, end);
    expect_block_end();
    return node;
  }

  // ---- expressions ----

  // Implicit tuples: `a, b` where a full expression is allowed.
  NodePtr parse_tuple_expression(bool no_condition = false) {
    const int line = peek().line;
    NodePtr first = no_condition ? parse_or() : parse_expression();
    if (!at_op(",")) return first;
    auto tuple = make_node(NodeKind::TupleLit, line);
    tuple->children.push_back(first);
    while (skip_op(",")) {
      if (peek().type == TokenType::BlockEnd || peek().type == TokenType::VarEnd || at_op(")")) break;
      tuple->children.push_back(no_condition ? parse_or() : parse_expression());
    }
    return tuple;
  }

  NodePtr parse_expression() {
    DepthGuard guard(*this);
    NodePtr value = parse_or();
    while (at_name("if")) {
      const int line = next().line;
      auto cond = make_node(NodeKind::Conditional, line);
      cond->children.push_back(value);
      cond->children.push_back(parse_or());
      cond->children.push_back(skip_name("else") ? parse_expression() : nullptr);
      value = cond;
    }
    return value;
  }

  NodePtr binary(const std::string& op, NodePtr a, NodePtr b, int line) {
    auto node = make_node(NodeKind::Binary, line);
    node->name = op;
    node->children = {std::move(a), std::move(b)};
    return node;
  }

  NodePtr parse_or() {
    NodePtr left = parse_and();
    while (at_name("or")) {
      const int line = next().line;
      left = binary("or", left, parse_and(), line);
    }
    return left;
  }

  NodePtr parse_and() {
    NodePtr left = parse_not();
    while (at_name("and")) {
      const int line = next().line;
      left = binary("and", left, parse_not(), line);
    }
    return left;
  }

  NodePtr parse_not() {
    if (at_name("not")) {
      DepthGuard guard(*this);
      const int line = next().line;
      auto node = make_node(NodeKind::Unary, line);
      node->name = "not";
      node->children.push_back(parse_not());
      return node;
    }
    return parse_compare();
  }

  NodePtr parse_compare() {
    const int line = peek().line;
    NodePtr first = parse_math1();
    NodePtr node;
    while (true) {
      std::string op;
      if (peek().type == TokenType::Operator &&
          (at_op("==") || at_op("!=") || at_op("<") || at_op(">") || at_op("<=") || at_op(">="))) {
        op = next().text;
      } else if (at_name("in")) {
        next();
        op = "in";
      } else if (at_name("not") && at_name("in", 1)) {
        next();
        next();
        op = "notin";
      } else {
        break;
      }
      if (!node) {
        node = make_node(NodeKind::Compare, line);
        node->children.push_back(first);
      }
      node->ops.push_back(op);
      node->children.push_back(parse_math1());
    }
    return node ? node : first;
  }

  NodePtr parse_math1() {
    NodePtr left = parse_concat();
    while (at_op("+") || at_op("-")) {
      const Token& op = next();
      left = binary(op.text, left, parse_concat(), op.line);
    }
    return left;
  }

  NodePtr parse_concat() {
    NodePtr left = parse_math2();
    while (at_op("~")) {
      const int line = next().line;
      left = binary("~", left, parse_math2(), line);
    }
    return left;
  }

  NodePtr parse_math2() {
    NodePtr left = parse_pow();
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
      const Token& op = next();
      left = binary(op.text, left, parse_pow(), op.line);
    }
    return left;
  }

  NodePtr parse_pow() {
    NodePtr left = parse_unary(true);
    while (at_op("**")) {
      const int line = next().line;
      left = binary("**", left, parse_unary(true), line);
    }
    return left;
  }

  NodePtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    NodePtr node;
    if (at_op("-") || at_op("+")) {
      const Token& op = next();
      node = make_node(NodeKind::Unary, op.line);
      node->name = op.text;
      node->children.push_back(parse_unary(false));
    } else {
      node = parse_postfix(parse_primary());
    }
    return with_filter ? parse_filter_expression(node) : node;
  }

  NodePtr parse_primary() {
    DepthGuard guard(*this);
    const Token& tok = peek();
    const int line = tok.line;
    if (tok.type == TokenType::Name) {
      next();
      auto node = make_node(NodeKind::Literal, line);
      if (tok.text == "true" || tok.text == "True") node->value = Value::boolean(true);
      else if (tok.text == "false" || tok.text == "False") node->value = Value::boolean(false);
      else if (tok.text == "none" || tok.text == "None") node->value = Value::none();
      else {
        node->kind = NodeKind::Name;
        node->name = tok.text;
      }
      return node;
    }
    if (tok.type == TokenType::String) {
      std::string text;
      while (peek().type == TokenType::String) text += next().text;  // adjacent literals concatenate
      auto node = make_node(NodeKind::Literal, line);
      node->value = Value::string(std::move(text));
      return node;
    }
    if (tok.type == TokenType::Integer) {
      next();
      auto node = make_node(NodeKind::Literal, line);
      int64_t v = 0;
      const auto res = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), v);
      if (res.ec != std::errc()) throw TemplateError(line, "integer literal out of range: " + tok.text);
      node->value = Value::integer(v);
      return node;
    }
    if (tok.type == TokenType::Float) {
      next();
      auto node = make_node(NodeKind::Literal, line);
      node->value = Value::number(std::strtod(tok.text.c_str(), nullptr));
      return node;
    }
    if (skip_op("(")) {
      if (skip_op(")")) return make_node(NodeKind::TupleLit, line);
      NodePtr first = parse_expression();
      if (skip_op(")")) return first;
      auto tuple = make_node(NodeKind::TupleLit, line);
      tuple->children.push_back(first);
      while (skip_op(",")) {
        if (at_op(")")) break;
        tuple->children.push_back(parse_expression());
      }
      expect_op(")");
      return tuple;
    }
    if (skip_op("[")) {
      auto list = make_node(NodeKind::ListLit, line);
      while (!at_op("]")) {
        list->children.push_back(parse_expression());
        if (!skip_op(",")) break;
      }
      expect_op("]");
      return list;
    }
    if (skip_op("{")) {
      auto dict = make_node(NodeKind::DictLit, line);
      while (!at_op("}")) {
        dict->children.push_back(parse_expression());
        expect_op(":");
        dict->children.push_back(parse_expression());
        if (!skip_op(",")) break;
      }
      expect_op("}");
      return dict;
    }
    fail("unexpected " + describe(tok));
  }

  void parse_call_arguments(Arguments& args) {
    expect_op("(");
    while (!at_op(")")) {
      if (peek().type == TokenType::Name && at_op("=", 1)) {
        std::string key = next().text;
        next();
        args.keyword.emplace_back(std::move(key), parse_expression());
      } else {
        if (!args.keyword.empty()) fail("positional argument after keyword argument");
        args.positional.push_back(parse_expression());
      }
      if (!skip_op(",")) break;
    }
    expect_op(")");
  }

  NodePtr parse_postfix(NodePtr node) {
    while (true) {
      const int line = peek().line;
      if (skip_op(".")) {
        if (peek().type == TokenType::Integer) {
          auto item = make_node(NodeKind::GetItem, line);
          auto key = make_node(NodeKind::Literal, line);
          key->value = Value::integer(std::strtoll(next().text.c_str(), nullptr, 10));
          item->children = {node, key};
          node = item;
        } else {
          auto attr = make_node(NodeKind::GetAttr, line);
          attr->name = expect_name();
          attr->children.push_back(node);
          node = attr;
        }
      } else if (skip_op("[")) {
        node = parse_subscript(node, line);
      } else if (at_op("(")) {
        auto call = make_node(NodeKind::Call, line);
        call->children.push_back(node);
        parse_call_arguments(call->args);
        node = call;
      } else {
        return node;
      }
    }
  }

  NodePtr parse_subscript(NodePtr object, int line) {
    NodePtr parts[3];
    int part = 0;
    bool is_slice = false;
    while (!at_op("]")) {
      if (skip_op(":")) {
        is_slice = true;
        if (++part > 2) fail("invalid slice");
        continue;
      }
      if (parts[part]) fail("expected ']' or ':'");
      parts[part] = parse_expression();
    }
    expect_op("]");
    if (!is_slice) {
      if (!parts[0]) fail("empty subscript");
      auto item = make_node(NodeKind::GetItem, line);
      item->children = {object, parts[0]};
      return item;
    }
    auto slice = make_node(NodeKind::Slice, line);
    slice->children = {object, parts[0], parts[1], parts[2]};
    return slice;
  }

  NodePtr parse_filter_call(NodePtr operand) {
    const int line = peek().line;
    auto node = make_node(NodeKind::Filter, line);
    node->name = expect_name();
    while (skip_op(".")) node->name += "." + expect_name();
    if (!has_filter(node->name)) throw TemplateError(line, "No filter named '" + node->name + "'.");
    node->children.push_back(operand);
    if (at_op("(")) parse_call_arguments(node->args);
    return node;
  }

  NodePtr parse_filter_expression(NodePtr node) {
    while (true) {
      if (skip_op("|")) {
        node = parse_filter_call(node);
      } else if (at_name("is")) {
        const int line = next().line;
        auto test = make_node(NodeKind::Test, line);
        test->negated = skip_name("not");
        test->name = expect_name();
        if (!has_test(test->name)) throw TemplateError(line, "No test named '" + test->name + "'.");
        test->children.push_back(node);
        if (at_op("(")) {
          parse_call_arguments(test->args);
        } else if (starts_test_argument()) {
          test->args.positional.push_back(parse_postfix(parse_primary()));
        }
        node = test;
      } else {
        return node;
      }
    }
  }

  // jinja2 accepts one argument without parentheses: `is divisibleby 3`.
  bool starts_test_argument() const {
    const Token& tok = peek();
    if (tok.type == TokenType::Name)
      return tok.text != "else" && tok.text != "or" && tok.text != "and" && tok.text != "if" &&
             tok.text != "is" && tok.text != "in" && tok.text != "not";
    if (tok.type == TokenType::String || tok.type == TokenType::Integer || tok.type == TokenType::Float) return true;
    return at_op("[") || at_op("{");
  }

  const std::vector<Token>& t_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

NodePtr parse(const std::vector<Token>& tokens) { return Parser(tokens).parse_template(); }

}  // namespace seatrt::text::jinja
