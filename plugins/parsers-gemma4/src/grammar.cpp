#include "grammar.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "markers.hpp"
#include "schema_checks.hpp"

namespace seatrt::parsers::gemma4 {
namespace {

using nlohmann::json;

constexpr size_t kMaxLiterals = 64;    // literal sets are tracked in a 64-bit mask
constexpr size_t kMaxProperties = 64;  // so are an object's keys
constexpr int kMaxSchemaDepth = 64;

Literal plain(std::string_view text) {
  return Literal{std::string(text), std::vector<bool>(text.size(), false)};
}

void append(Literal& lit, std::string_view text, bool special) {
  lit.bytes.append(text);
  lit.special.insert(lit.special.end(), text.size(), special);
}

bool contains_marker(std::string_view text) {
  return std::any_of(kAllMarkers.begin(), kAllMarkers.end(),
                     [&](std::string_view m) { return text.find(m) != std::string_view::npos; });
}

void build_marker_automaton(Grammar& g) {
  // Trie of the marker texts, then failure links (Aho-Corasick), flattened
  // into a full transition table: a few hundred states at most.
  std::vector<std::map<uint8_t, int>> trie(1);
  std::vector<bool> hit(1, false);
  for (std::string_view m : kAllMarkers) {
    int s = 0;
    for (char c : m) {
      const auto b = static_cast<uint8_t>(c);
      auto it = trie[static_cast<size_t>(s)].find(b);
      if (it == trie[static_cast<size_t>(s)].end()) {
        trie.emplace_back();
        hit.push_back(false);
        const int next = static_cast<int>(trie.size() - 1);
        trie[static_cast<size_t>(s)][b] = next;
        s = next;
      } else {
        s = it->second;
      }
    }
    hit[static_cast<size_t>(s)] = true;
  }
  if (trie.size() > 255) throw std::logic_error("marker automaton too large");
  std::vector<int> fail(trie.size(), 0);
  g.ac_next.assign(trie.size(), {});
  std::queue<int> order;
  for (int b = 0; b < 256; ++b) {
    auto it = trie[0].find(static_cast<uint8_t>(b));
    g.ac_next[0][static_cast<size_t>(b)] = it == trie[0].end() ? 0 : static_cast<uint8_t>(it->second);
    if (it != trie[0].end()) order.push(it->second);
  }
  while (!order.empty()) {
    const int s = order.front();
    order.pop();
    const auto su = static_cast<size_t>(s);
    hit[su] = hit[su] || hit[static_cast<size_t>(fail[su])];
    for (int b = 0; b < 256; ++b) {
      auto it = trie[su].find(static_cast<uint8_t>(b));
      const uint8_t via_fail = g.ac_next[static_cast<size_t>(fail[su])][static_cast<size_t>(b)];
      if (it == trie[su].end()) {
        g.ac_next[su][static_cast<size_t>(b)] = via_fail;
      } else {
        g.ac_next[su][static_cast<size_t>(b)] = static_cast<uint8_t>(it->second);
        fail[static_cast<size_t>(it->second)] = via_fail;
        order.push(it->second);
      }
    }
  }
  g.ac_hit = hit;
}

class Compiler {
 public:
  Compiler(Grammar& g, const json* document) : g_(g), document_(document), first_node_(g.nodes.size()) {}

  int add(Node node) {
    g_.nodes.push_back(std::move(node));
    return static_cast<int>(g_.nodes.size() - 1);
  }

  Literal string_literal(const std::string& s) const {
    Literal lit;
    if (g_.syntax == Syntax::kNative) {
      append(lit, kStringDelim, true);
      append(lit, s, false);
      append(lit, kStringDelim, true);
    } else {
      append(lit, json(s).dump(), false);
    }
    return lit;
  }

  int literals(std::vector<Literal> lits) {
    Node n;
    n.kind = NodeKind::kLiterals;
    n.literals = std::move(lits);
    return add(std::move(n));
  }

  int any_value(uint32_t depth) {
    auto it = any_cache_.find(depth);
    if (it != any_cache_.end()) return it->second;
    Node n;
    n.kind = NodeKind::kAnyValue;
    n.depth = depth;
    const int id = add(n);
    any_cache_[depth] = id;
    if (depth > 0) {
      Node obj;
      obj.kind = NodeKind::kAnyObject;
      obj.depth = depth - 1;
      obj.children = {any_value(depth - 1)};
      Node arr;
      arr.kind = NodeKind::kAnyArray;
      arr.depth = depth - 1;
      arr.max_items = g_.limits.max_array_items;
      arr.items = any_value(depth - 1);
      const int o = add(obj), a = add(arr);
      g_.nodes[static_cast<size_t>(id)].children = {o, a};
    }
    // A value with no schema: one of object, array (while nesting is left),
    // string, number, true/false/null; the first byte tells which.
    Node str;
    str.kind = NodeKind::kString;
    str.max_bytes = g_.limits.max_string_bytes;
    Node num;
    num.kind = NodeKind::kNumber;
    const int s = add(str), number = add(num);
    const int l = literals({plain("true"), plain("false"), plain("null")});
    auto& children = g_.nodes[static_cast<size_t>(id)].children;
    children.insert(children.end(), {s, number, l});
    return id;
  }

  int any_object() {
    Node obj;
    obj.kind = NodeKind::kAnyObject;
    obj.depth = g_.limits.any_depth;
    obj.children = {any_value(g_.limits.any_depth)};
    return add(obj);
  }

  // Whether every value of `id` is an object (through unions and $refs).
  bool writes_object(int id, uint32_t depth) const {
    const Node& n = g_.nodes[static_cast<size_t>(id)];
    if (n.kind == NodeKind::kObject || n.kind == NodeKind::kAnyObject) return true;
    if (n.kind != NodeKind::kUnion || n.children.empty() || depth > kMaxUnionChain) return false;
    return std::all_of(n.children.begin(), n.children.end(), [&](int c) { return writes_object(c, depth + 1); });
  }

  int compile(const json& schema, int depth) {
    if (depth > kMaxSchemaDepth) throw std::invalid_argument("schema nests too deeply");
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) throw std::invalid_argument("schema 'false' matches nothing");
      return any_value(g_.limits.any_depth);
    }
    if (!schema.is_object()) throw std::invalid_argument("a schema must be an object");
    refuse_unenforced(schema);
    check_counts(schema);
    refuse_combinator_siblings(schema);
    if (auto ref = schema.find("$ref"); ref != schema.end()) return compile_ref(*ref, depth);
    if (auto e = schema.find("enum"); e != schema.end()) {
      // Beside const, only the enum values equal to it.
      if (auto c = schema.find("const"); c != schema.end() && e->is_array()) {
        json same = json::array();
        for (const json& v : *e)
          if (v == *c) same.push_back(v);
        if (same.empty()) throw std::invalid_argument("no value of 'enum' equals the schema's 'const'");
        return compile_enum(same, schema, "enum");
      }
      return compile_enum(*e, schema, "enum");
    }
    if (auto c = schema.find("const"); c != schema.end()) return compile_enum(json::array({*c}), schema, "const");
    for (const char* key : {"anyOf", "oneOf"}) {
      if (auto alts = schema.find(key); alts != schema.end()) {
        if (!alts->is_array() || alts->empty()) {
          throw std::invalid_argument(std::string(key) + " must be a non-empty array");
        }
        Node u;
        u.kind = NodeKind::kUnion;
        for (const json& alt : *alts) u.children.push_back(compile(alt, depth + 1));
        return add(std::move(u));
      }
    }
    if (auto all = schema.find("allOf"); all != schema.end()) {
      if (!all->is_array() || all->size() != 1) {
        throw std::invalid_argument("allOf with more than one schema is not supported");
      }
      return compile((*all)[0], depth + 1);
    }
    auto type = schema.find("type");
    if (type == schema.end()) {
      // No type: keywords that assert only about one kind of value say which
      // kinds to write (writing only those keeps every output valid), else
      // any value.
      std::vector<std::string> kinds;
      const auto has = [&](std::initializer_list<const char*> keys) {
        return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return schema.contains(k); });
      };
      if (has({"properties", "required", "additionalProperties", "unevaluatedProperties", "minProperties",
               "maxProperties"}))
        kinds.push_back("object");
      if (has({"items", "unevaluatedItems", "minItems", "maxItems"})) kinds.push_back("array");
      if (has({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) kinds.push_back("number");
      if (has({"minLength", "maxLength"})) kinds.push_back("string");
      if (kinds.empty()) return any_value(g_.limits.any_depth);
      if (kinds.size() == 1) return compile_typed(schema, kinds[0], depth);
      Node u;
      u.kind = NodeKind::kUnion;
      for (const std::string& t : kinds) u.children.push_back(compile_typed(schema, t, depth));
      return add(std::move(u));
    }
    if (type->is_string()) return compile_typed(schema, type->get<std::string>(), depth);
    if (!type->is_array() || type->empty()) {
      throw std::invalid_argument("'type' must be a string or a non-empty array");
    }
    std::vector<std::string> types;
    for (const json& t : *type) {
      if (!t.is_string()) throw std::invalid_argument("'type' lists a non-string");
      types.push_back(t.get<std::string>());
    }
    // "number" accepts every integer; keep one so the union stays unambiguous.
    if (std::count(types.begin(), types.end(), "number")) {
      types.erase(std::remove(types.begin(), types.end(), "integer"), types.end());
    }
    if (types.size() == 1) return compile_typed(schema, types[0], depth);
    Node u;
    u.kind = NodeKind::kUnion;
    for (const std::string& t : types) u.children.push_back(compile_typed(schema, t, depth));
    return add(std::move(u));
  }

 private:
  int compile_ref(const json& ref, int depth) {
    if (!ref.is_string()) throw std::invalid_argument("$ref must be a string");
    const std::string path = ref.get<std::string>();
    if (auto it = ref_cache_.find(path); it != ref_cache_.end()) return it->second;
    // A JSON pointer into this document ("#" is the whole of it, so a
    // schema may recurse through its root): percent-decoded, then ~1 and ~0
    // unescaped by the pointer itself.
    const json* target = nullptr;
    if (document_ && path.starts_with("#")) {
      std::string fragment;
      for (size_t i = 1; i < path.size(); ++i) {
        const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
        if (path[i] == '%' && i + 2 < path.size() && hex(path[i + 1]) && hex(path[i + 2])) {
          fragment += static_cast<char>(std::stoi(path.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          fragment += path[i];
        }
      }
      if (fragment.empty()) {
        target = document_;
      } else if (fragment.front() == '/') {
        try {
          const json::json_pointer pointer(fragment);
          if (document_->contains(pointer)) target = &document_->at(pointer);
        } catch (const json::exception&) {
          // malformed (e.g. a bad ~ escape): unresolved below
        }
      }
    }
    if (!target) throw std::invalid_argument("unresolved $ref '" + path + "' (refs point into this schema: #, #/$defs/...)");
    // A union of one stands in while the target compiles, so a recursive
    // schema becomes a cycle in the graph: the Matcher bounds its depth when
    // the cycle goes through an object or array; check_chains() refuses one
    // that does not (it would consume nothing on the way round).
    Node forward;
    forward.kind = NodeKind::kUnion;
    const int id = add(forward);
    ref_cache_[path] = id;
    const int body = compile(*target, depth + 1);
    g_.nodes[static_cast<size_t>(id)].children = {body};
    return id;
  }

  // enum or const (`keyword`): the values that also meet the schema's other
  // keywords (type, bounds, lengths: enum_value_fits).
  int compile_enum(const json& values, const json& schema, const char* keyword) {
    const std::string kw(keyword);
    if (!values.is_array() || values.empty()) throw std::invalid_argument(kw + " must be a non-empty array");
    std::vector<Literal> lits;
    bool any_fits = false;
    for (const json& v : values) {
      if (!enum_value_fits(v, schema)) continue;
      any_fits = true;
      if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (contains_marker(s)) continue;  // cannot be written as plain text
        lits.push_back(string_literal(s));
      } else if (v.is_number() || v.is_boolean() || v.is_null()) {
        lits.push_back(plain(v.dump()));
      }  // objects and arrays in an enum are not supported: skipped
    }
    if (!any_fits) throw std::invalid_argument("no value of '" + kw + "' meets the schema's other keywords");
    if (lits.empty()) throw std::invalid_argument(kw + " has no value that can be enforced");
    if (lits.size() > kMaxLiterals) throw std::invalid_argument(kw + " has more than 64 values");
    return literals(std::move(lits));
  }

  // A declared key as the output writes it: JSON escapes it (a key with
  // '"', '\\' or a control character is written escaped, and "" is a key);
  // the native syntax writes keys bare, so those keys are not writable there.
  // Empty when the key cannot be written.
  std::string written_key(const std::string& key) const {
    if (key.size() > 256 || contains_marker(key)) return "";
    if (g_.syntax == Syntax::kJson) {
      const std::string quoted = json(key).dump();
      return quoted.substr(1, quoted.size() - 2);  // may be empty: the key ""
    }
    if (key.empty()) return "";
    for (char c : key) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || c == ':' || c == ',' || c == '{' || c == '}') return "";
    }
    return key;
  }
  // (In JSON written_key is "" also for the writable key "".)
  bool key_writable(const std::string& key) const {
    if (key.size() > 256 || contains_marker(key)) return false;
    return g_.syntax == Syntax::kJson || !written_key(key).empty();
  }

  // An object: its declared properties (and the required keys it does not
  // declare, with any value unless additionalProperties forbids them), else
  // a free object whose values follow additionalProperties.  Nothing but
  // declared keys is written, so additionalProperties holds by construction
  // where properties exist.
  int compile_object(const json& schema, int depth) {
    json props = json::object();
    if (auto p = schema.find("properties"); p != schema.end() && p->is_object()) props = *p;
    std::vector<std::string> required;
    if (auto r = schema.find("required"); r != schema.end() && r->is_array()) {
      for (const json& k : *r)
        if (k.is_string() && std::find(required.begin(), required.end(), k.get<std::string>()) == required.end())
          required.push_back(k.get<std::string>());
    }
    // unevaluatedProperties says the same as additionalProperties here: no
    // combinator beside it evaluates anything (refused in schema_checks).
    const json additional = schema.value("additionalProperties", schema.value("unevaluatedProperties", json(true)));
    const bool closed = additional.is_boolean() && !additional.get<bool>();
    for (const std::string& key : required) {
      if (props.contains(key)) continue;
      if (closed)
        throw std::invalid_argument("required property '" + key + "' is not in 'properties' and "
                                    "additionalProperties is false: no object fits");
      props[key] = additional.is_object() ? additional : json::object();  // an undeclared key's schema
    }
    const uint32_t max_props = count_of(schema, "maxProperties", UINT32_MAX);
    if (props.empty()) {
      if (count_of(schema, "minProperties", 0) > 0)
        throw std::invalid_argument("'minProperties' on an object without properties cannot be enforced by "
                                    "constrained decoding; declare the keys in 'properties' and 'required'");
      if (closed || max_props == 0) {  // only {}
        Node empty;
        empty.kind = NodeKind::kObject;
        return add(empty);
      }
      // Free keys; their values follow additionalProperties when it is a schema.
      Node obj;
      obj.kind = NodeKind::kAnyObject;
      obj.depth = g_.limits.any_depth;
      obj.max_items = std::min(max_props, g_.limits.max_free_keys);
      const int id = add(obj);
      const int value = additional.is_object() && !additional.empty() ? compile(additional, depth + 1)
                                                                       : any_value(g_.limits.any_depth);
      g_.nodes[static_cast<size_t>(id)].children = {value};
      return id;
    }
    Node n;
    n.kind = NodeKind::kObject;
    std::vector<std::string> keys;  // the schema's names, beside the written ones
    for (const auto& [key, sub] : props.items()) {
      const bool is_required = std::count(required.begin(), required.end(), key) > 0;
      if (sub.is_boolean() && !sub.get<bool>()) {  // the key may not appear
        if (is_required) throw std::invalid_argument("required property '" + key + "' has the schema false");
        continue;
      }
      if (!key_writable(key)) {
        if (is_required) throw std::invalid_argument("required property '" + key + "' cannot be written");
        continue;
      }
      n.properties.push_back({written_key(key), -1, is_required});
      keys.push_back(key);
    }
    if (n.properties.size() > kMaxProperties) throw std::invalid_argument("more than 64 properties");
    // Property counts: enforced where they hold for every output (the
    // required ones are always written, nothing beyond the declared ones).
    const size_t required_written = static_cast<size_t>(
        std::count_if(n.properties.begin(), n.properties.end(), [](const Property& p) { return p.required; }));
    if (count_of(schema, "minProperties", 0) > required_written)
      throw std::invalid_argument("'minProperties' above the number of required properties cannot be enforced "
                                  "by constrained decoding; list the properties in 'required' instead");
    if (max_props < n.properties.size())
      throw std::invalid_argument("'maxProperties' below the number of declared properties cannot be enforced "
                                  "by constrained decoding");
    const int id = add(n);
    for (size_t i = 0; i < keys.size(); ++i) {
      const int child = compile(props[keys[i]], depth + 1);
      g_.nodes[static_cast<size_t>(id)].properties[i].node = child;
    }
    return id;
  }

  int compile_typed(const json& schema, const std::string& type, int depth) {
    Node n;
    if (type == "object") return compile_object(schema, depth);
    if (type == "array") {
      n.kind = NodeKind::kArray;
      n.min_items = count_of(schema, "minItems", 0);
      n.max_items =
          std::max(n.min_items, std::min(count_of(schema, "maxItems", UINT32_MAX), g_.limits.max_array_items));
      auto items = schema.find("items");
      if (items != schema.end() && items->is_array())
        throw std::invalid_argument("'items' as an array (a draft-4 tuple) cannot be enforced by constrained decoding; "
                                    "give one schema for every item");
      if (items == schema.end()) items = schema.find("unevaluatedItems");  // the same here: nothing else evaluates
      if (items != schema.end() && items->is_boolean() && !items->get<bool>()) {
        n.min_items = 0;  // no item may appear: []
        n.max_items = 0;
        if (count_of(schema, "minItems", 0) > 0) throw std::invalid_argument("'minItems' above 0 with items false");
      }
      const int id = add(n);
      const int item = (items == schema.end() || items->is_boolean()) ? any_value(g_.limits.any_depth)
                                                                       : compile(*items, depth + 1);
      g_.nodes[static_cast<size_t>(id)].items = item;
      return id;
    }
    if (type == "string") {
      n.kind = NodeKind::kString;
      n.max_bytes = std::min(count_of(schema, "maxLength", UINT32_MAX), g_.limits.max_string_bytes);
      n.min_chars = count_of(schema, "minLength", 0);
      if (n.min_chars > n.max_bytes)
        throw std::invalid_argument("'minLength' " + std::to_string(n.min_chars) + " is above the longest string " +
                                    "this request may write (" + std::to_string(n.max_bytes) +
                                    (schema.contains("maxLength") ? ", its maxLength)" : " bytes, the server's limit)"));
      return add(n);
    }
    if (type == "integer") {
      n.kind = NodeKind::kInteger;
      n.bounds = read_bounds(schema, true, std::min(g_.limits.max_number_digits, kBoundedIntDigits));
      return add(n);
    }
    if (type == "number") {
      n.kind = NodeKind::kNumber;
      n.bounds = read_bounds(schema, false, g_.limits.max_number_digits);
      return add(n);
    }
    if (type == "boolean") return literals({plain("true"), plain("false")});
    if (type == "null") return literals({plain("null")});
    throw std::invalid_argument("unknown schema type '" + type + "'");
  }

  // A union (or any-value) node: the Matcher passes it without consuming a
  // byte, choosing an alternative.
  bool passes(int id) const {
    const NodeKind kind = g_.nodes[static_cast<size_t>(id)].kind;
    return kind == NodeKind::kUnion || kind == NodeKind::kAnyValue;
  }

  std::string chain_error(int id, const std::string& problem) const {
    auto it = std::find_if(ref_cache_.begin(), ref_cache_.end(), [&](const auto& r) { return r.second == id; });
    return "the schema's $ref chain at '" + it->first + "' " + problem;
  }

 public:
  // Refuses what the Matcher cannot walk among the nodes compiled here: a
  // loop of $ref, anyOf, oneOf and allOf that comes back to where it started
  // without consuming a character (it would recurse forever), and a run of
  // them longer than kMaxUnionChain.  Only a $ref can close a loop (every
  // other node gets its children before it exists), so one is always there
  // to name.  Iterative: the graph may be as long as the schema.
  void check_chains() const {
    const size_t n = g_.nodes.size();
    enum : uint8_t { kNew, kOnPath, kDone };
    std::vector<uint8_t> state(n, kNew);
    std::vector<uint32_t> run(n, 0);           // the longest run of passing nodes from here
    std::vector<std::pair<int, size_t>> path;  // node, next child to visit
    const auto named = [&](int id) {
      return std::any_of(ref_cache_.begin(), ref_cache_.end(), [&](const auto& r) { return r.second == id; });
    };
    for (size_t start = first_node_; start < n; ++start) {
      if (state[start] != kNew || !passes(static_cast<int>(start))) continue;
      state[start] = kOnPath;
      path.emplace_back(static_cast<int>(start), 0);
      while (!path.empty()) {
        const int id = path.back().first;
        const std::vector<int>& children = g_.nodes[static_cast<size_t>(id)].children;
        if (path.back().second < children.size()) {
          const int child = children[path.back().second++];
          if (!passes(child)) continue;
          const auto c = static_cast<size_t>(child);
          if (state[c] == kOnPath) {
            auto on_loop = std::find_if(path.begin(), path.end(), [&](const auto& p) { return p.first == child; });
            auto ref = std::find_if(on_loop, path.end(), [&](const auto& p) { return named(p.first); });
            const std::string problem = "refers back to itself without passing through an object or array";
            if (ref == path.end()) throw std::invalid_argument("the schema " + problem);
            throw std::invalid_argument(chain_error(ref->first, problem));
          }
          if (state[c] == kNew) {
            state[c] = kOnPath;
            path.emplace_back(child, 0);
          }
          continue;
        }
        uint32_t longest = 0;
        for (int child : children) {
          if (passes(child)) longest = std::max(longest, run[static_cast<size_t>(child)]);
        }
        run[static_cast<size_t>(id)] = longest + 1;
        state[static_cast<size_t>(id)] = kDone;
        if (longest + 1 > kMaxUnionChain) {
          // Name the first $ref down the longest run.
          int at = id;
          while (!named(at)) {
            const std::vector<int>& next = g_.nodes[static_cast<size_t>(at)].children;
            auto down = std::find_if(next.begin(), next.end(), [&](int c) {
              return passes(c) && run[static_cast<size_t>(c)] + 1 == run[static_cast<size_t>(at)];
            });
            if (down == next.end()) throw std::invalid_argument("schema nests too deeply");
            at = *down;
          }
          throw std::invalid_argument(chain_error(
              at, "goes through more than " + std::to_string(kMaxUnionChain) +
                      " references and alternatives before it reaches an object, array or value"));
        }
        path.pop_back();
      }
    }
  }

 private:
  Grammar& g_;
  const json* document_;
  size_t first_node_;  // the nodes before are another compiler's
  std::map<uint32_t, int> any_cache_;
  std::map<std::string, int> ref_cache_;
};

// Sets every node's min_frames: Knuth's generalization of Dijkstra's
// algorithm (a node is measured once its value is known to be the least: an
// object or array when the last part it needs is, a union with its first
// alternative).  The roots are not measured (their values are checked apart).
void measure_frames(Grammar& g) {
  const size_t n = g.nodes.size();
  std::vector<std::vector<int>> users(n);  // the objects, arrays and unions that need a node
  std::vector<uint32_t> waiting(n, 0);     // objects and arrays: parts not measured yet
  std::vector<bool> done(n, false);
  using Entry = std::pair<uint32_t, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  const auto is_union = [&](size_t i) {
    return g.nodes[i].kind == NodeKind::kUnion || g.nodes[i].kind == NodeKind::kAnyValue;
  };
  for (size_t i = 0; i < n; ++i) {
    Node& node = g.nodes[i];
    node.min_frames = UINT32_MAX;
    const int id = static_cast<int>(i);
    switch (node.kind) {
      case NodeKind::kObject:
        for (const Property& p : node.properties) {
          if (!p.required) continue;
          users[static_cast<size_t>(p.node)].push_back(id);
          ++waiting[i];
        }
        break;
      case NodeKind::kArray:
        if (node.min_items > 0) {
          users[static_cast<size_t>(node.items)].push_back(id);
          ++waiting[i];
        }
        break;
      case NodeKind::kUnion:
      case NodeKind::kAnyValue:
        for (int child : node.children) users[static_cast<size_t>(child)].push_back(id);
        break;
      case NodeKind::kToolCalls:
      case NodeKind::kJsonRoot:
        node.min_frames = 1;
        done[i] = true;
        break;
      default:
        break;
    }
    if (!done[i] && !is_union(i) && waiting[i] == 0) ready.emplace(1, id);
  }
  while (!ready.empty()) {
    const auto [frames, id] = ready.top();
    ready.pop();
    const auto i = static_cast<size_t>(id);
    if (done[i]) continue;
    done[i] = true;
    g.nodes[i].min_frames = frames;
    for (int user : users[i]) {
      const auto u = static_cast<size_t>(user);
      if (done[u]) continue;
      if (is_union(u)) {
        ready.emplace(frames, user);
      } else if (--waiting[u] == 0) {
        ready.emplace(frames + 1, user);  // the last part measured is the deepest
      }
    }
  }
}

// The value under a root must fit in the frames the root leaves.
void check_fits(const Grammar& g, int value) {
  if (g.nodes[static_cast<size_t>(value)].min_frames <= kMaxNesting - 1) return;
  throw std::invalid_argument("the schema has no value that fits in " + std::to_string(kMaxNesting - 1) +
                              " levels of nesting (does a required property or minItems lead back to itself?)");
}

Node root_node(NodeKind kind, RootOptions root) {
  Node n;
  n.kind = kind;
  n.allow_thought = root.allow_thought || root.start_in_thought;
  n.start_in_thought = root.start_in_thought;
  return n;
}

}  // namespace

Grammar compile_tool_calls(const std::vector<ToolSchema>& tools, bool many, RootOptions root,
                           const GrammarLimits& limits) {
  Grammar g;
  g.syntax = Syntax::kNative;
  g.limits = limits;
  build_marker_automaton(g);
  if (tools.empty()) throw std::invalid_argument("no tool to call");
  if (tools.size() > kMaxLiterals) throw std::invalid_argument("more than 64 tools to choose from");
  Node r = root_node(NodeKind::kToolCalls, root);
  r.many_calls = many;
  const int id = static_cast<int>(g.nodes.size());
  g.nodes.push_back(r);
  for (const ToolSchema& tool : tools) {
    Compiler c(g, tool.parameters);
    int params = -1;
    // No parameters: any arguments.  Otherwise the schema must describe an
    // object (the call writes NAME{ARGS}): an object, or alternatives that
    // all are ($ref, anyOf); anything else is refused rather than replaced
    // by "any object" (a $ref to the arguments' schema once was).
    if (!tool.parameters || tool.parameters->is_null()) {
      params = c.any_object();
    } else {
      if (!tool.parameters->is_object())
        throw std::invalid_argument("function '" + tool.name + "': 'parameters' must be a JSON schema object");
      params = c.compile(*tool.parameters, 0);
      c.check_chains();
      if (!c.writes_object(params, 0))
        throw std::invalid_argument("function '" + tool.name + "': its 'parameters' schema does not describe an "
                                    "object (a call's arguments are one)");
    }
    g.nodes[static_cast<size_t>(id)].literals.push_back(plain(tool.name));
    g.nodes[static_cast<size_t>(id)].children.push_back(params);
  }
  measure_frames(g);
  for (int params : g.nodes[static_cast<size_t>(id)].children) check_fits(g, params);
  g.root = id;
  return g;
}

Grammar compile_json(const json* schema, RootOptions root, const GrammarLimits& limits) {
  Grammar g;
  g.syntax = Syntax::kJson;
  g.limits = limits;
  build_marker_automaton(g);
  const int id = static_cast<int>(g.nodes.size());
  g.nodes.push_back(root_node(NodeKind::kJsonRoot, root));
  Compiler c(g, schema);
  const int value = schema ? c.compile(*schema, 0) : c.any_object();
  c.check_chains();
  g.nodes[static_cast<size_t>(id)].children = {value};
  measure_frames(g);
  check_fits(g, value);
  g.root = id;
  return g;
}

}  // namespace seatrt::parsers::gemma4
