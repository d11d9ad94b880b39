// The grammar that constrained decoding enforces, compiled from JSON
// schemas: a graph of nodes that the Matcher walks byte by byte.
//
// Two surface syntaxes: Gemma-4's native call arguments (bare keys, strings
// between <|"|> delimiters) for forced tool calls, and JSON for
// response_format.  No whitespace is allowed between tokens (the model's
// trained native syntax has none, and it keeps generation from stalling).
//
// Supported schema keywords: type (one or a list, or inferred from the
// keywords when absent), properties, required, additionalProperties (false,
// or a schema for the values of an object without properties),
// maxProperties, items, minItems, maxItems, minLength, maxLength, minimum,
// maximum, exclusiveMinimum, exclusiveMaximum (numeric_bounds.hpp), enum and
// const (filtered by their sibling keywords), anyOf, oneOf (as anyOf), a
// one-element allOf, $ref to #/$defs or #/definitions.  Objects never get
// keys their schema does not name.  format is an annotation (JSON Schema
// 2020-12, 7.2): not enforced.  Refused with an error naming the keyword
// (schema_checks.hpp): assertions the Matcher cannot enforce (pattern,
// multipleOf, not, if/then/else, ...), bad or contradictory counts, and
// assertions beside a combinator, so that no output silently breaks its
// schema; a $ref chain (through $ref, anyOf, oneOf, allOf) that refers back
// to itself without passing through an object or array; and a schema whose
// every value nests deeper than the Matcher's bound (kMaxNesting).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "numeric_bounds.hpp"

namespace seatrt::parsers::gemma4 {

enum class Syntax { kNative, kJson };

// The longest run of nodes that the Matcher walks without consuming a byte
// (a $ref stands in as a union of one, and anyOf, oneOf and type lists are
// unions): it recurses once per node of such a run.  A schema with a longer
// run, or with a loop of them, is refused when it compiles; the Matcher
// refuses a byte rather than walk further, whatever graph it is given.
inline constexpr uint32_t kMaxUnionChain = 128;
// The Matcher's stack of frames: the root, then one frame per object or
// array being written and one for the value inside the innermost.
inline constexpr uint32_t kMaxNesting = 32;

// Bounds that make every constrained output finite (a model that never
// closes a string would otherwise run to max_tokens).
struct GrammarLimits {
  uint32_t max_string_bytes = 2048;
  uint32_t max_thought_bytes = 32768;
  uint32_t max_array_items = 64;
  uint32_t max_number_digits = 20;
  uint32_t max_free_keys = 16;  // keys of an object whose schema names none
  uint32_t max_key_bytes = 48;
  uint32_t any_depth = 5;       // nesting of a value with no schema
  uint32_t max_calls = 8;       // calls per turn for tool_choice "required"
};

// A literal byte string some of whose bytes must come from a special token
// (the control-token texts such as <|"|>).
struct Literal {
  std::string bytes;
  std::vector<bool> special;
};

enum class NodeKind {
  kObject,
  kArray,
  kString,
  kInteger,
  kNumber,
  kLiterals,  // one of a set of literals (enum, const, booleans, null, names)
  kUnion,
  kAnyValue,
  kAnyObject,
  kAnyArray,
  kToolCalls,  // the root of a forced tool call: [thought] call+
  kJsonRoot    // the root of a response_format answer: [thought] value
};

struct Property {
  std::string name;
  int node = -1;
  bool required = false;
};

struct Node {
  NodeKind kind = NodeKind::kAnyValue;
  std::vector<Property> properties;  // kObject
  int items = -1;                    // kArray, kAnyArray (the item node)
  uint32_t min_items = 0;
  uint32_t max_items = 0;
  uint32_t max_bytes = 0;            // kString
  uint32_t min_chars = 0;            // kString: minLength (characters, escapes count one)
  NumberBounds bounds;               // kInteger, kNumber: minimum/maximum and the exclusive ones
  std::vector<Literal> literals;     // kLiterals; kToolCalls: the names
  std::vector<int> children;         // kUnion: alternatives; kToolCalls: params per name;
                                     // kJsonRoot: the value; kAny*: the nested any-value
  uint32_t depth = 0;                // kAny*: nesting left
  bool allow_thought = false;        // roots: an optional <|channel>...<channel|> first
  bool start_in_thought = false;     // roots: the prompt opened the channel already
  bool many_calls = false;           // kToolCalls: "required" (more than one allowed)
  // The frames the Matcher needs to write the smallest value of this node,
  // its own included (required properties and minItems nest); UINT32_MAX
  // when every value contains another of itself.  The Matcher never starts a
  // value that could not end within kMaxNesting.
  uint32_t min_frames = 1;
};

struct Grammar {
  Syntax syntax = Syntax::kNative;
  GrammarLimits limits;
  std::vector<Node> nodes;
  int root = -1;
  // The Aho-Corasick automaton over the control-token texts that string and
  // thought bodies must never contain as plain text.
  std::vector<std::array<uint8_t, 256>> ac_next;
  std::vector<bool> ac_hit;
};

struct ToolSchema {
  std::string name;
  const nlohmann::json* parameters = nullptr;  // may be null
};

struct RootOptions {
  bool allow_thought = false;
  bool start_in_thought = false;
};

// A forced tool call: one call of `tools` (several when `many`).  Throws
// std::invalid_argument naming the problem for a schema it cannot enforce.
Grammar compile_tool_calls(const std::vector<ToolSchema>& tools, bool many, RootOptions root,
                           const GrammarLimits& limits);
// A JSON answer that matches `schema` (nullptr: any JSON object).
Grammar compile_json(const nlohmann::json* schema, RootOptions root, const GrammarLimits& limits);

}  // namespace seatrt::parsers::gemma4
