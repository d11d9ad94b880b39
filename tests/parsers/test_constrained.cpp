// Constrained decoding: for each schema, random logits masked by the parser's
// allowed-token hook always give output that parses and matches the schema,
// in 100% of at least 1000 runs per schema and mode.  Matching is checked by
// an independent validator (schema_validator.cpp); every output is also
// dumped for a second check with Python's jsonschema (validate_outputs.py).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>

#include "constrained_decoder.hpp"
#include "constrained_vocab.hpp"
#include "gemma4_parser.hpp"
#include "grammar.hpp"
#include "harness.hpp"
#include "matcher.hpp"
#include "schema_validator.hpp"
#include "token_trie.hpp"

using namespace seatrt::parsers::test;
using nlohmann::json;

namespace {

const json& schemas() {
  static const json s = json::parse(R"JSON([
  {"type": "object", "properties": {
     "city": {"type": "string"}, "days": {"type": "integer"},
     "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
     "opts": {"type": "object", "properties": {"hourly": {"type": "boolean"}}, "required": ["hourly"]},
     "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
   "required": ["city"]},
  {"type": "object", "properties": {
     "items": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "price": {"type": "number"}, "ok": {"type": ["boolean", "null"]}},
        "required": ["id", "price"]}}},
   "required": ["items"]},
  {"type": "object", "properties": {
     "level": {"enum": [1, 2, 3]}, "mode": {"type": "string", "enum": ["a", "ab", "abc"]},
     "flag": {"type": "boolean"}, "note": {"type": "null"}, "value": {"type": "string", "maxLength": 4}},
   "required": ["level", "mode", "flag"]},
  {"type": "object", "properties": {
     "value": {"anyOf": [{"type": "string"}, {"type": "number"},
                          {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}]}},
   "required": ["value"]},
  {"$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                        "required": ["x", "y"]}},
   "type": "object", "properties": {"city": {"$ref": "#/$defs/point"},
                                     "path": {"type": "array", "items": {"$ref": "#/$defs/point"}, "maxItems": 2}},
   "required": ["city"]},
  {"type": "object", "properties": {
     "n": {"type": "integer", "minimum": 3, "maximum": 17},
     "neg": {"type": "integer", "minimum": -40, "exclusiveMaximum": -5},
     "big": {"type": "integer", "minimum": 1000000000000},
     "half": {"type": "integer", "minimum": 0.5, "maximum": 2.5},
     "p": {"type": "number", "minimum": 0, "maximum": 1},
     "t": {"type": "number", "exclusiveMinimum": -0.25, "exclusiveMaximum": 0.5},
     "pin": {"type": "number", "minimum": 2.5, "maximum": 2.5},
     "tenth": {"type": "number", "minimum": -0.1, "maximum": 0.1},
     "opt": {"type": ["integer", "null"], "minimum": 5, "maximum": 6},
     "name": {"type": "string", "minLength": 3, "maxLength": 6},
     "nonempty": {"type": "string", "minLength": 1}},
   "required": ["n", "neg", "big", "half", "p", "t", "pin", "tenth", "opt", "name", "nonempty"]},
  {"type": "object", "properties": {
     "e": {"enum": [1, 2, 3, 4.5], "minimum": 2},
     "dict": {"type": "object", "additionalProperties": {"type": "integer", "maximum": 5}, "maxProperties": 2},
     "closed": {"type": "object", "additionalProperties": false},
     "extra": {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k", "other"]},
     "untyped": {"maximum": 3}},
   "required": ["e", "dict", "closed", "extra", "untyped"]},
  {"type": "object"}
  ])JSON");
  return s;
}

constexpr const char* kOptions = "max_string_bytes = 12\nmax_thought_bytes = 16\nmax_array_items = 3\nmax_calls = 3\nany_depth = 2\nmax_free_keys = 3\n";

struct Outcome {
  json message;
  int32_t finish;
  std::string text;
};

// One generation: random logits, masked by the hook, argmax; until a stop token.
Outcome generate(const TestVocab& vocab, seatrt_parser_request request, std::mt19937& rng) {
  request.vocab = vocab.get();
  seatrt::parsers::gemma4::Gemma4Parser parser(kOptions, request);
  Recorder recorder;
  const size_t words = (static_cast<size_t>(vocab.size()) + 31) / 32;
  std::vector<uint32_t> mask(words);
  std::uniform_real_distribution<float> logit(-4.f, 4.f);
  const std::vector<int32_t> stops = {vocab.id("<turn|>"), vocab.id("<eos>"), vocab.id("<|tool_response>")};
  Outcome out;
  for (int step = 0; step < 4000; ++step) {
    REQUIRE(parser.allowed_tokens(mask.data(), words));
    int32_t best = -1;
    float best_logit = -1e9f;
    for (int32_t id = 0; id < vocab.size(); ++id) {
      const float l = logit(rng);
      if ((mask[static_cast<size_t>(id) / 32] >> (id % 32) & 1) && l > best_logit) {
        best = id;
        best_logit = l;
      }
    }
    INFO("text so far: " << out.text);
    REQUIRE(best >= 0);  // the mask is never empty
    if (std::count(stops.begin(), stops.end(), best)) {
      out.finish = parser.finish(SEATRT_FINISH_STOP, recorder);
      out.message = recorder.message();
      REQUIRE(recorder.problems().empty());
      return out;
    }
    out.text += vocab.bytes(best);
    parser.feed(&best, 1, vocab.bytes(best), recorder);
  }
  FAIL("generation did not end: " << out.text);
  return out;
}

struct Strings {
  std::string tools, choice, format, kwargs;
  seatrt_parser_request request{};
};

void fill(Strings& s) {
  s.request.struct_size = sizeof(seatrt_parser_request);
  s.request.request_id = "t";
  s.request.tools_json = s.tools.c_str();
  s.request.tool_choice_json = s.choice.c_str();
  s.request.response_format_json = s.format.c_str();
  s.request.chat_template_kwargs_json = s.kwargs.c_str();
  s.request.prompt_tail = "";
}

// Where to dump the outputs for validate_outputs.py (env SEATRT_PARSERS_DUMP),
// or nowhere.
std::ofstream* dump() {
  static std::ofstream out;
  static const bool open = [] {
    if (const char* path = std::getenv("SEATRT_PARSERS_DUMP")) out.open(path);
    return out.is_open();
  }();
  return open ? &out : nullptr;
}

void record(const json& schema, const json& value) {
  if (auto* out = dump()) *out << json{{"schema", schema}, {"value", value}}.dump() << "\n";
}

const int kRuns = 1000;

}  // namespace

TEST_CASE("named tool_choice: every output is one call that matches the schema", "[parsers][constrained]") {
  const TestVocab vocab = constrained_vocab();
  std::mt19937 rng(7);
  for (size_t k = 0; k < schemas().size(); ++k) {
    const json& schema = schemas()[k];
    Strings s;
    s.tools = json::array({{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", schema}}}},
                           {{"type", "function"}, {"function", {{"name", "search"}}}}})
                  .dump();
    s.choice = R"({"type": "function", "function": {"name": "get_weather"}})";
    int failures = 0;
    for (int run = 0; run < kRuns; ++run) {
      s.kwargs = run % 4 == 0 ? R"({"enable_thinking": true})" : "{}";
      fill(s);
      const Outcome o = generate(vocab, s.request, rng);
      INFO("schema " << k << " output " << o.text);
      REQUIRE(o.message.contains("tool_calls"));
      REQUIRE(o.message["tool_calls"].size() == 1);
      CHECK(o.message["content"].is_null());
      CHECK(o.finish == SEATRT_FINISH_STOP);
      const auto& fn = o.message["tool_calls"][0]["function"];
      CHECK(fn["name"] == "get_weather");
      const json args = json::parse(fn["arguments"].get<std::string>());  // throws if not JSON
      record(schema, args);
      if (auto e = validate(args, schema, schema)) {
        ++failures;
        FAIL_CHECK(*e << " in " << args.dump());
      }
    }
    CHECK(failures == 0);
  }
}

TEST_CASE("required tool_choice: one or more calls, each matching its tool", "[parsers][constrained]") {
  const TestVocab vocab = constrained_vocab();
  std::mt19937 rng(11);
  Strings s;
  s.tools = json::array({{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", schemas()[0]}}}},
                         {{"type", "function"}, {"function", {{"name", "search"}, {"parameters", schemas()[2]}}}}})
                .dump();
  s.choice = "\"required\"";
  for (int run = 0; run < kRuns; ++run) {
    s.kwargs = run % 3 == 0 ? R"({"enable_thinking": true})" : "{}";
    fill(s);
    const Outcome o = generate(vocab, s.request, rng);
    INFO("output " << o.text);
    REQUIRE(o.message.contains("tool_calls"));
    CHECK(o.finish == SEATRT_FINISH_TOOL_CALLS);
    for (const auto& call : o.message["tool_calls"]) {
      const std::string name = call["function"]["name"];
      const json& schema = name == "get_weather" ? schemas()[0] : schemas()[2];
      REQUIRE((name == "get_weather" || name == "search"));
      const json args = json::parse(call["function"]["arguments"].get<std::string>());
      record(schema, args);
      const auto e = validate(args, schema, schema);
      CHECK_FALSE(e.has_value());
    }
  }
}

TEST_CASE("response_format json_schema and json_object: the content is matching JSON", "[parsers][constrained]") {
  const TestVocab vocab = constrained_vocab();
  std::mt19937 rng(13);
  for (size_t k = 0; k <= schemas().size(); ++k) {
    const bool object_only = k == schemas().size();
    const json schema = object_only ? json{{"type", "object"}} : schemas()[k];
    Strings s;
    s.format = object_only ? json{{"type", "json_object"}}.dump()
                           : json{{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}.dump();
    for (int run = 0; run < kRuns; ++run) {
      s.kwargs = run % 5 == 0 ? R"({"enable_thinking": true})" : "{}";
      fill(s);
      const Outcome o = generate(vocab, s.request, rng);
      INFO("schema " << k << " output " << o.text);
      CHECK(o.finish == SEATRT_FINISH_STOP);
      const json value = json::parse(o.message["content"].get<std::string>());
      record(schema, value);
      const auto e = validate(value, schema, schema);
      CHECK_FALSE(e.has_value());
    }
  }
}

TEST_CASE("a token outside the mask turns the constraint off instead of failing", "[parsers][constrained]") {
  const TestVocab vocab = constrained_vocab();
  Strings s;
  s.format = R"({"type": "json_object"})";
  fill(s);
  s.request.vocab = vocab.get();
  seatrt::parsers::gemma4::Gemma4Parser parser("", s.request);
  Recorder recorder;
  const size_t words = (static_cast<size_t>(vocab.size()) + 31) / 32;
  std::vector<uint32_t> mask(words);
  REQUIRE(parser.allowed_tokens(mask.data(), words));
  const int32_t x = vocab.id("x");
  CHECK_FALSE(mask[static_cast<size_t>(x) / 32] >> (x % 32) & 1);
  parser.feed(&x, 1, "x", recorder);
  CHECK_FALSE(parser.allowed_tokens(mask.data(), words));
}

TEST_CASE("impossible requests are refused with a clear message", "[parsers][constrained]") {
  Strings s;
  s.tools = R"([{"type": "function", "function": {"name": "a"}}])";
  s.choice = R"({"type": "function", "function": {"name": "b"}})";
  fill(s);
  CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", s.request),
                    Catch::Contains("tool_choice names function 'b'"));
  s.tools = "";
  s.choice = "\"required\"";
  fill(s);
  CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", s.request), Catch::Contains("at least one tool"));
  s.choice = "";
  s.format = R"({"type": "json_schema", "json_schema": {"schema": {"type": "widget"}}})";
  fill(s);
  TestVocab vocab = constrained_vocab();
  s.request.vocab = vocab.get();
  CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", s.request), Catch::Contains("unknown schema type"));
}

namespace {

// Schemas whose $ref chain comes back to where it started without writing a
// character (through $ref, anyOf, oneOf or a one-element allOf): the matcher
// would walk the loop forever.  Each names the $ref the error must point at.
struct CyclicSchema {
  const char* schema;
  const char* pointer;
};

const CyclicSchema kCyclicSchemas[] = {
    {R"({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}})", "#/$defs/a"},
    {R"({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}})", "#/$defs/a"},
    {R"({"$ref": "#/definitions/a", "definitions": {"a": {"$ref": "#/definitions/b"},
         "b": {"$ref": "#/definitions/a"}}})", "#/definitions/a"},
    {R"({"$ref": "#/$defs/a", "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}]}}})",
     "#/$defs/a"},
    {R"({"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}],
         "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}]}}})", "#/$defs/a"},
    {R"({"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}],
         "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "string"}]}}})",
     "#/$defs/a"},
    {R"({"$ref": "#/$defs/a", "$defs": {"a": {"oneOf": [{"type": "integer"}, {"$ref": "#/$defs/a"}]}}})",
     "#/$defs/a"},
    {R"({"$ref": "#/$defs/a", "$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}})", "#/$defs/a"},
    {R"({"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}], "$defs": {"a": {"$ref": "#/$defs/a"}}})",
     "#/$defs/a"},
    {R"({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "required": ["x"],
         "$defs": {"a": {"$ref": "#/$defs/a"}}})", "#/$defs/a"},
    {R"({"type": "array", "items": {"$ref": "#/$defs/b"},
         "$defs": {"a": {"type": "string"}, "b": {"allOf": [{"$ref": "#/$defs/b"}]}}})", "#/$defs/b"},
    // Behind an optional property: still a broken schema.
    {R"({"type": "object", "properties": {"y": {"type": "string"}, "x": {"$ref": "#/$defs/a"}},
         "$defs": {"a": {"$ref": "#/$defs/a"}}})", "#/$defs/a"},
};

std::string cycle_message(const char* pointer) {
  return std::string("$ref chain at '") + pointer +
         "' refers back to itself without passing through an object or array";
}

// Objects and arrays nested in a value, itself included.
int nesting(const json& value) {
  if (!value.is_object() && !value.is_array()) return 0;
  int deepest = 0;
  for (const json& item : value) deepest = std::max(deepest, nesting(item));
  return deepest + 1;
}

}  // namespace

TEST_CASE("a $ref cycle that writes nothing is refused, not a stack overflow", "[parsers][constrained]") {
  TestVocab vocab = constrained_vocab();
  for (const CyclicSchema& c : kCyclicSchemas) {
    const json schema = json::parse(c.schema);
    INFO("schema " << schema.dump());
    const std::string expected = cycle_message(c.pointer);
    Strings s;
    s.format = json{{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}.dump();
    fill(s);
    s.request.vocab = vocab.get();
    CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", s.request), Catch::Contains(expected));
    // As a forced tool's parameters, named or "required" (with and without a
    // vocabulary: the schema is refused either way).  Parameters whose type
    // is not "object" are not compiled (any object stands in): skipped.
    if (schema.value("type", "object") != "object") continue;
    Strings t;
    t.tools = json::array({{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", schema}}}},
                           {{"type", "function"}, {"function", {{"name", "g"}}}}})
                  .dump();
    for (const char* choice : {R"("required")", R"({"type": "function", "function": {"name": "f"}})"}) {
      t.choice = choice;
      fill(t);
      CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", t.request), Catch::Contains(expected));
      t.request.vocab = vocab.get();
      CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", t.request), Catch::Contains(expected));
    }
    // tool_choice "auto" compiles no grammar: nothing to refuse.
    t.choice = R"("auto")";
    fill(t);
    t.request.vocab = vocab.get();
    CHECK_NOTHROW(seatrt::parsers::gemma4::Gemma4Parser("", t.request));
  }
}

TEST_CASE("a $ref chain too long to walk is refused, and a root $ref to itself stays unresolved",
          "[parsers][constrained]") {
  TestVocab vocab = constrained_vocab();
  // a0 -> a1 -> ... -> a299 -> string: no cycle, but 300 steps without a
  // character.  The root lists them last first so none nests deeply.
  json defs = json::object();
  json alternatives = json::array();
  const int n = 300;
  for (int i = n - 1; i >= 0; --i) {
    const std::string name = "a" + std::to_string(i);
    defs[name] = i == n - 1 ? json{{"type", "string"}} : json{{"$ref", "#/$defs/a" + std::to_string(i + 1)}};
    alternatives.push_back({{"$ref", "#/$defs/" + name}});
  }
  const json schema = {{"anyOf", alternatives}, {"$defs", defs}};
  Strings s;
  s.format = json{{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}.dump();
  fill(s);
  s.request.vocab = vocab.get();
  CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", s.request),
                    Catch::Contains("$ref chain at '#/$defs/a") && Catch::Contains("more than 128"));
  // A short chain of the same kind is fine.
  json short_defs = json::object();
  json short_alternatives = json::array();
  for (int i = 9; i >= 0; --i) {
    const std::string name = "a" + std::to_string(i);
    short_defs[name] = i == 9 ? json{{"type", "string"}} : json{{"$ref", "#/$defs/a" + std::to_string(i + 1)}};
    short_alternatives.push_back({{"$ref", "#/$defs/" + name}});
  }
  s.format = json{{"type", "json_schema"},
                  {"json_schema", {{"name", "x"}, {"schema", {{"anyOf", short_alternatives}, {"$defs", short_defs}}}}}}
                 .dump();
  fill(s);
  s.request.vocab = vocab.get();
  CHECK_NOTHROW(seatrt::parsers::gemma4::Gemma4Parser("", s.request));
  s.format = R"({"type": "json_schema", "json_schema": {"schema": {"$ref": "#"}}})";
  fill(s);
  s.request.vocab = vocab.get();
  // "#" is the schema itself (a root that is only a ref to itself loops).
  CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", s.request),
                    Catch::Contains("$ref chain at '#' refers back to itself"));
}

TEST_CASE("the matcher fails cleanly on a cycle of alternatives the compiler did not refuse",
          "[parsers][constrained]") {
  using namespace seatrt::parsers::gemma4;
  const json string_schema = {{"type", "string"}};
  // Graphs built by hand, past the compiler's checks: a union that is its
  // own alternative, a two-union loop behind a real alternative, and a
  // 100000-long acyclic chain of unions.
  for (int shape = 0; shape < 3; ++shape) {
    INFO("shape " << shape);
    Grammar g = compile_json(&string_schema, RootOptions{}, GrammarLimits{});
    const int str = g.nodes[static_cast<size_t>(g.root)].children[0];
    Node u;
    u.kind = NodeKind::kUnion;
    const int first = static_cast<int>(g.nodes.size());
    if (shape == 0) {
      g.nodes.push_back(u);
      g.nodes.back().children = {first};
    } else if (shape == 1) {
      g.nodes.push_back(u);
      g.nodes.push_back(u);
      g.nodes[static_cast<size_t>(first)].children = {str, first + 1};
      g.nodes[static_cast<size_t>(first + 1)].children = {first};
    } else {
      for (int i = 0; i < 100000; ++i) {
        g.nodes.push_back(u);
        g.nodes.back().children = {first + i + 1};
      }
      g.nodes.back().children = {str};
    }
    g.nodes[static_cast<size_t>(g.root)].children = {first};
    Matcher m(g);
    CHECK_FALSE(m.can_end());
    if (shape == 1) {
      Matcher ok(m);
      CHECK(ok.step('"', false));  // the string alternative comes first
      CHECK(ok.step('a', false));
    }
    Matcher bad(m);
    CHECK_FALSE(bad.step('1', false));
    // The mask of such a state is computed without crashing, too.
    const TestVocab vocab = constrained_vocab();
    ConstrainedDecoder decoder(std::make_shared<const Grammar>(g), shared_token_trie(*vocab.get()), *vocab.get());
    const size_t words = (static_cast<size_t>(vocab.size()) + 31) / 32;
    std::vector<uint32_t> mask(words);
    decoder.allowed(mask.data(), words);
    const int32_t quote = vocab.id("\"");
    CHECK(static_cast<bool>(mask[static_cast<size_t>(quote) / 32] >> (quote % 32) & 1) == (shape == 1));
  }
}

TEST_CASE("recursive schemas (a tree through array items, a list through a property) still constrain the output",
          "[parsers][constrained]") {
  // Each with the nesting that random output must reach: the tree, 15
  // levels of object and array, reaches the Matcher's bound of 32 frames
  // (the root, one per object or array, one for the innermost value), where
  // a key or a ',' whose value could not end within it is no longer offered
  // (it once was, and the mask then came out empty); the list, whose "next"
  // is taken about one time in two, goes less deep.
  const std::pair<json, int> nodes[] = {
      {json::parse(R"({"type": "object", "properties": {
          "name": {"type": "string", "maxLength": 4},
          "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
        "required": ["name"]})"),
       28},
      {json::parse(R"({"type": "object", "properties": {
          "value": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
        "required": ["value"]})"),
       10}};
  const TestVocab vocab = constrained_vocab();
  std::mt19937 rng(17);
  for (const auto& [node, expected_nesting] : nodes) {
    const json schema = {{"$defs", {{"node", node}}}, {"$ref", "#/$defs/node"}};
    // A tool's parameters must be an object: the recursive value sits under one key.
    const json params = {{"$defs", {{"node", node}}},
                         {"type", "object"},
                         {"properties", {{"root", {{"$ref", "#/$defs/node"}}}}},
                         {"required", {"root"}}};
    int deepest_json = 0, deepest_call = 0;
    for (int run = 0; run < kRuns; ++run) {
      Strings s;
      s.kwargs = run % 5 == 0 ? R"({"enable_thinking": true})" : "{}";
      s.format = json{{"type", "json_schema"}, {"json_schema", {{"name", "rec"}, {"schema", schema}}}}.dump();
      fill(s);
      const Outcome o = generate(vocab, s.request, rng);
      INFO("output " << o.text);
      CHECK(o.finish == SEATRT_FINISH_STOP);
      const json value = json::parse(o.message["content"].get<std::string>());
      record(schema, value);
      const auto e = validate(value, schema, schema);
      CHECK_FALSE(e.has_value());
      deepest_json = std::max(deepest_json, nesting(value));

      Strings t;
      t.kwargs = s.kwargs;
      t.tools =
          json::array({{{"type", "function"}, {"function", {{"name", "search"}, {"parameters", params}}}}}).dump();
      t.choice = R"({"type": "function", "function": {"name": "search"}})";
      fill(t);
      const Outcome call = generate(vocab, t.request, rng);
      INFO("call " << call.text);
      REQUIRE(call.message.contains("tool_calls"));
      REQUIRE(call.message["tool_calls"].size() == 1);
      const json args = json::parse(call.message["tool_calls"][0]["function"]["arguments"].get<std::string>());
      record(params, args);
      const auto ce = validate(args, params, params);
      CHECK_FALSE(ce.has_value());
      REQUIRE(args.contains("root"));
      deepest_call = std::max(deepest_call, nesting(args["root"]));
    }
    INFO("schema " << schema.dump());
    CHECK(deepest_json >= expected_nesting);
    CHECK(deepest_call >= expected_nesting);
  }
}

TEST_CASE("a recursive schema with no finite value is refused", "[parsers][constrained]") {
  TestVocab vocab = constrained_vocab();
  for (const char* text : {
           R"({"$ref": "#/$defs/n", "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}},
               "required": ["next"]}}})",
           R"({"$ref": "#/$defs/n", "$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"},
               "minItems": 1}}})",
           R"({"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}, "required": ["x"],
               "$defs": {"n": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/n"}, "minItems": 2},
                                         {"type": "object", "properties": {"y": {"$ref": "#/$defs/n"}},
                                          "required": ["y"]}]}}})"}) {
    const json schema = json::parse(text);
    INFO("schema " << schema.dump());
    Strings s;
    s.format = json{{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}.dump();
    fill(s);
    s.request.vocab = vocab.get();
    CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", s.request),
                      Catch::Contains("no value that fits in 31 levels of nesting"));
    if (schema.value("type", "") == "object") {
      Strings t;
      t.tools = json::array({{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", schema}}}}}).dump();
      t.choice = R"("required")";
      fill(t);
      t.request.vocab = vocab.get();
      CHECK_THROWS_WITH(seatrt::parsers::gemma4::Gemma4Parser("", t.request),
                        Catch::Contains("no value that fits in 31 levels of nesting"));
    }
  }
  // The same recursion left optional is fine: the Matcher ends it in time.
  Strings s;
  s.format = R"({"type": "json_schema", "json_schema": {"schema": {"$ref": "#/$defs/n", "$defs": {"n":
      {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}}}})";
  fill(s);
  s.request.vocab = vocab.get();
  CHECK_NOTHROW(seatrt::parsers::gemma4::Gemma4Parser("", s.request));
}

namespace {

// Whether `segments` (text, and whether its bytes come from special
// tokens) are a complete output of grammar `g`.
bool walks(const seatrt::parsers::gemma4::Grammar& g, const std::vector<std::pair<std::string, bool>>& segments) {
  seatrt::parsers::gemma4::Matcher m(g);
  for (const auto& [text, special] : segments)
    for (char c : text)
      if (!m.step(static_cast<uint8_t>(c), special)) return false;
  return m.can_end();
}

// Whether `text` (plain bytes) is a complete answer of the JSON grammar of
// `schema`.
bool accepts(const json& schema, const std::string& text) {
  using namespace seatrt::parsers::gemma4;
  return walks(compile_json(&schema, RootOptions{}, GrammarLimits{}), {{text, false}});
}

// A schema with answers its JSON grammar must accept and answers it must refuse.
struct AcceptCase {
  const char* schema;
  std::vector<std::string> accepted, refused;
};
void check_cases(const std::vector<AcceptCase>& cases) {
  for (const AcceptCase& c : cases) {
    const json schema = json::parse(c.schema);
    for (const std::string& text : c.accepted) {
      INFO(c.schema << " must accept " << text);
      CHECK(accepts(schema, text));
    }
    for (const std::string& text : c.refused) {
      INFO(c.schema << " must refuse " << text);
      CHECK_FALSE(accepts(schema, text));
    }
  }
}

}  // namespace

TEST_CASE("numeric bounds hold exactly at decimal bounds, inclusive and exclusive, in both drafts' syntax",
          "[parsers][constrained]") {
  check_cases({
      // Sixteen digits after the point still equal 0.1; bounded numbers are
      // written without an exponent.
      {R"({"type": "number", "maximum": 0.1})",
       {"0.1", "0.0999", "-5", "0.1000000000000000"},
       {"0.1000000000000001", "0.11", "1", "1e-3"}},
      {R"({"type": "number", "exclusiveMinimum": 0})", {"0.0000000000000001", "12"}, {"0", "0.0", "-0", "-0.5"}},
      {R"({"type": "integer", "minimum": 0, "maximum": 10, "exclusiveMaximum": true})", {"0", "9"}, {"10", "-1"}},
      {R"({"type": "integer", "minimum": 0.5, "maximum": 2.5})", {"1", "2"}, {"0", "3"}},
      {R"({"type": "integer", "minimum": -40, "maximum": -5})", {"-40", "-5"}, {"-41", "-4", "-0", "7"}},
      // A bound past what 18 digits can write leaves that side open (19
      // digits are past the integer limit, as unbounded).
      {R"({"type": "integer", "maximum": 1e300})", {"999999999999999999"}, {"1000000000000000000"}},
  });
  // (The native syntax of tool calls takes the same bounds: the named
  // tool_choice test above writes schemas()'s bounded object 1000 times.)
}

TEST_CASE("minLength counts characters: multi-byte ones and escapes count one each", "[parsers][constrained]") {
  const json three = json::parse(R"({"type": "string", "minLength": 3})");
  CHECK(accepts(three, "\"abc\""));
  CHECK(accepts(three, "\"a\\nb\""));
  CHECK(accepts(three, "\"\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\""));  // é € 𝄞: three characters, nine bytes
  CHECK_FALSE(accepts(three, "\"ab\""));
  CHECK_FALSE(accepts(three, "\"\\n\\n\""));
  CHECK_FALSE(accepts(three, "\"\xF0\x9D\x84\x9E\xF0\x9D\x84\x9E\""));  // two characters, eight bytes
  // With maxLength 4 (bytes): two 2-byte characters would leave no byte for
  // the third, so the second is refused at once rather than at the close.
  const json tight = json::parse(R"({"type": "string", "minLength": 3, "maxLength": 4})");
  CHECK(accepts(tight, "\"abcd\""));
  CHECK_FALSE(accepts(tight, "\"\xC3\xA9\xC3\xA9"));
}

TEST_CASE("schema keywords that cannot be enforced are refused, naming the keyword", "[parsers][constrained]") {
  using namespace seatrt::parsers::gemma4;
  const std::pair<const char*, const char*> cases[] = {
      {R"({"type": "string", "pattern": "^[a-z]+$"})", "'pattern'"},
      {R"({"type": "integer", "multipleOf": 5})", "'multipleOf'"},
      {R"({"not": {"type": "string"}})", "'not'"},
      {R"({"type": "array", "items": {"type": "integer"}, "uniqueItems": true})", "'uniqueItems'"},
      {R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "minProperties": 1})",
       "'minProperties'"},
      {R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "maxProperties": 1})",
       "'maxProperties'"},
      {R"({"type": "object", "properties": {"x": {"type": "string", "pattern": "a"}}})", "'pattern'"},
      {R"({"type": "string", "minLength": 9, "maxLength": 4})", "'minLength' 9"},
      {R"({"type": "integer", "minimum": 10, "maximum": 2})", "lower bound 10 and upper bound 2"},
      {R"({"type": "integer", "minimum": 0.2, "maximum": 0.8})", "no integer"},
      {R"({"type": "integer", "minimum": 1e30})", "no integer of at most 18 digits"},
      {R"({"type": "number", "maximum": "10"})", "'maximum' must be a number"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    const json schema = json::parse(text);
    CHECK_THROWS_WITH(compile_json(&schema, RootOptions{}, GrammarLimits{}), Catch::Contains(message));
  }
  // Not refused: keywords that only permit more than the output ever uses,
  // and format (an annotation).
  for (const char* text : {R"({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true,
                               "patternProperties": {"^x": {}}, "minProperties": 0, "maxProperties": 5})",
                           R"({"type": "string", "format": "date-time"})",
                           R"({"type": "array", "items": {"type": "integer"}, "uniqueItems": false})"}) {
    INFO(text);
    const json schema = json::parse(text);
    CHECK_NOTHROW(compile_json(&schema, RootOptions{}, GrammarLimits{}));
  }
}

namespace {

// Whether a tool call of `params`'s function, written as `segments` (text,
// and whether its bytes come from special tokens), is accepted whole.
bool native_accepts(const json& params, const std::vector<std::pair<std::string, bool>>& segments) {
  using namespace seatrt::parsers::gemma4;
  const ToolSchema tool{"f", &params};
  return walks(compile_tool_calls({tool}, false, RootOptions{}, GrammarLimits{}), segments);
}

}  // namespace

TEST_CASE("keywords beside a combinator, enum or const are applied or refused, never dropped",
          "[parsers][constrained]") {
  using namespace seatrt::parsers::gemma4;
  // Found by a sweep of the demo seat: each of these gave output breaking
  // its schema (a number for an object, 1 and 4.5 for an enum between 2 and
  // 4, any keys in an object closed to them, a required key missing).
  const std::pair<const char*, const char*> refused[] = {
      {R"({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]})",
       "'type' beside 'anyOf'"},
      {R"({"type": "integer", "oneOf": [{"minimum": 1}, {"maximum": -1}]})", "'type' beside 'oneOf'"},
      {R"({"$ref": "#/$defs/n", "maximum": 3, "$defs": {"n": {"type": "integer"}}})", "'maximum' beside '$ref'"},
      {R"({"allOf": [{"type": "integer"}], "maximum": 3})", "'maximum' beside 'allOf'"},
      {R"({"type": "integer", "const": "x"})", "no value of 'const'"},
      {R"({"type": "object", "properties": {"a": {}}, "required": ["a", "b"], "additionalProperties": false})",
       "required property 'b' is not in 'properties'"},
      {R"({"type": "object", "additionalProperties": {"type": "string", "pattern": "^a"}})", "'pattern'"},
      {R"({"type": "array", "minItems": 5, "maxItems": 3})", "'minItems' 5 is above 'maxItems' 3"},
      {R"({"type": "array", "minItems": -1})", "'minItems' must be a non-negative integer"},
      {R"({"type": "array", "maxItems": 2.5})", "'maxItems' must be a non-negative integer"},
      {R"({"type": "string", "minLength": -1})", "'minLength' must be a non-negative integer"},
      {R"({"enum": [1, 2], "const": 3})", "no value of 'enum' equals the schema's 'const'"},
      {R"({"type": "object", "properties": {"a": false}, "required": ["a"]})", "required property 'a' has the schema false"},
      // A key that cannot be written (it spells a control token) is not
      // written as some other key.
      {R"({"type": "object", "properties": {"<|\"|>": {"type": "integer"}}, "required": ["<|\"|>"]})",
       "cannot be written"},
      {R"({"type": "array", "items": [{"type": "integer"}]})", "'items' as an array"},
  };
  for (const auto& [text, message] : refused) {
    INFO(text);
    const json schema = json::parse(text);
    CHECK_THROWS_WITH(compile_json(&schema, RootOptions{}, GrammarLimits{}), Catch::Contains(message));
  }
  check_cases({
      // Annotations beside $ref change nothing.
      {R"({"$ref": "#/$defs/n", "description": "d", "title": "t", "$defs": {"n": {"type": "integer"}}})",
       {"7"}, {"\"x\""}},
      {R"({"enum": [1, 2, 3, 4.5], "minimum": 2, "maximum": 4})", {"2", "3"}, {"1", "4.5"}},
      {R"({"type": "integer", "enum": [1.5, 2, "3"]})", {"2"}, {"1.5", "\"3\""}},
      {R"({"type": "object", "additionalProperties": false})", {"{}"}, {"{\"a\":1}"}},
      {R"({"type": "object", "maxProperties": 0})", {"{}"}, {"{\"a\":1}"}},
      {R"({"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 1})",
       {"{}", "{\"a\":1}"}, {"{\"a\":\"x\"}", "{\"a\":1.5}", "{\"a\":1,\"b\":2}"}},
      {R"({"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a", "zzz"]})",
       {"{\"a\":true,\"zzz\":5}", "{\"zzz\":null,\"a\":false}"}, {"{\"a\":true}"}},
      // No type: the keywords say which kinds to write.
      {R"({"maximum": 3})", {"3", "-1.5"}, {"4", "\"x\""}},
      {R"({"additionalProperties": false})", {"{}"}, {"{\"a\":1}", "1"}},
      // enum beside const: only the values equal to it.
      {R"({"enum": ["a", "b"], "const": "b"})", {"\"b\""}, {"\"a\""}},
      // unevaluated* say what additionalProperties / items would here.
      {R"({"type": "object", "unevaluatedProperties": false})", {"{}"}, {"{\"a\":1}"}},
      {R"({"type": "object", "unevaluatedProperties": {"type": "integer"}})", {"{\"a\":1}"}, {"{\"a\":true}"}},
      {R"({"type": "array", "unevaluatedItems": false})", {"[]"}, {"[1]"}},
      {R"({"type": "array", "unevaluatedItems": {"type": "integer"}})", {"[1,2]"}, {"[true]"}},
      // A property whose schema is false is never written.
      {R"({"type": "object", "properties": {"a": false, "b": {"type": "integer"}}, "required": ["b"]})",
       {"{\"b\":1}"}, {"{\"a\":1,\"b\":1}"}},
      // $ref: the root, a pointer with ~1 and percent escapes, a pointer into properties.
      {R"({"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2}}})",
       {"{\"kids\":[{\"kids\":[]},{}]}"}, {"{\"kids\":[1]}"}},
      {R"({"$ref": "#/$defs/a~1b", "$defs": {"a/b": {"type": "integer"}}})", {"3"}, {"\"x\""}},
      {R"({"$ref": "#/$defs/M%5Bint%5D", "$defs": {"M[int]": {"type": "boolean"}}})", {"true"}, {"1"}},
      {R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"$ref": "#/properties/a"}},
          "required": ["b"]})", {"{\"b\":2}"}, {"{\"b\":\"x\"}"}},
      // JSON writes keys that need escaping, and the key "".
      {R"({"type": "object", "properties": {"a\"q": {"type": "integer"}, "b\\s": {"type": "integer"},
          "": {"type": "integer"}}, "required": ["a\"q", "b\\s", ""]})",
       {"{\"a\\\"q\":1,\"b\\\\s\":2,\"\":3}"}, {"{\"a\\\"q\":1}"}},
  });
}

TEST_CASE("maxItems 0 keeps a native array empty also when an item would start with a special token",
          "[parsers][constrained]") {
  // The native string delimiter <|"|> is a special token: that path once
  // skipped the maxItems check (a sweep saw m:[<|"|>... in 7-10 of 20 calls).
  const json params = json::parse(R"({"type": "object", "properties": {"m": {"type": "array", "maxItems": 0,
                                      "items": {"type": "string"}}}, "required": ["m"]})");
  CHECK(native_accepts(params, {{"<|tool_call>", true}, {"call:f{m:[]}", false}, {"<tool_call|>", true}}));
  CHECK_FALSE(native_accepts(params, {{"<|tool_call>", true}, {"call:f{m:[", false}, {"<|\"|>", true},
                                      {"x", false}, {"<|\"|>", true}, {"]}", false}, {"<tool_call|>", true}}));
  const json one = json::parse(R"({"type": "object", "properties": {"m": {"type": "array", "maxItems": 1,
                                   "items": {"type": "string"}}}, "required": ["m"]})");
  CHECK(native_accepts(one, {{"<|tool_call>", true}, {"call:f{m:[", false}, {"<|\"|>", true}, {"x", false},
                             {"<|\"|>", true}, {"]}", false}, {"<tool_call|>", true}}));
}

TEST_CASE("a tool's parameters reached through $ref keep their constraints; a non-object schema is refused",
          "[parsers][constrained]") {
  using namespace seatrt::parsers::gemma4;
  // A $ref (or anyOf) of objects compiles to alternatives, which the call
  // root once replaced by "any object", dropping every constraint.
  const json ref = json::parse(R"({"$ref": "#/$defs/A", "$defs": {"A": {"type": "object",
      "properties": {"x": {"type": "integer", "maximum": 3}}, "required": ["x"]}}})");
  CHECK(native_accepts(ref, {{"<|tool_call>", true}, {"call:f{x:3}", false}, {"<tool_call|>", true}}));
  CHECK_FALSE(native_accepts(ref, {{"<|tool_call>", true}, {"call:f{x:4}", false}, {"<tool_call|>", true}}));
  CHECK_FALSE(native_accepts(ref, {{"<|tool_call>", true}, {"call:f{y:1}", false}, {"<tool_call|>", true}}));
  for (const char* text : {R"({"type": "string"})", R"([1])", R"({"anyOf": [{"type": "object"}, {"type": "integer"}]})"}) {
    INFO(text);
    const json params = json::parse(text);
    const ToolSchema tool{"f", &params};
    CHECK_THROWS_WITH(compile_tool_calls({tool}, false, RootOptions{}, GrammarLimits{}),
                      Catch::Contains("function 'f'"));
  }
}

TEST_CASE("parallel_tool_calls false: one call, forced or not", "[parsers][constrained]") {
  const TestVocab vocab = constrained_vocab();
  std::mt19937 rng(17);
  Strings s;
  s.tools = json::array({{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", schemas()[0]}}}},
                         {{"type", "function"}, {"function", {{"name", "search"}, {"parameters", schemas()[2]}}}}})
                .dump();
  // Forced ("required"): the grammar takes one call only.  The same
  // requests with parallel calls allowed write several now and then (the
  // control: the limit is what makes the difference).
  int several_when_allowed = 0;
  for (int parallel = 0; parallel <= 1; ++parallel) {
    for (int run = 0; run < 300; ++run) {
      s.choice = "\"required\"";
      s.kwargs = "{}";
      fill(s);
      s.request.parallel_tool_calls = parallel;
      const Outcome o = generate(vocab, s.request, rng);
      REQUIRE(o.message.contains("tool_calls"));
      if (!parallel) CHECK(o.message["tool_calls"].size() == 1);
      if (parallel && o.message["tool_calls"].size() > 1) ++several_when_allowed;
    }
  }
  CHECK(several_when_allowed > 0);

  // Not forced ("auto"): once a call is complete only the stop tokens are
  // allowed; before it, nothing is constrained.
  s.choice = "\"auto\"";
  for (int parallel = 0; parallel <= 1; ++parallel) {
    fill(s);
    s.request.parallel_tool_calls = parallel;
    s.request.vocab = vocab.get();
    seatrt::parsers::gemma4::Gemma4Parser parser("", s.request);
    Recorder recorder;
    const size_t words = (static_cast<size_t>(vocab.size()) + 31) / 32;
    std::vector<uint32_t> mask(words);
    CHECK_FALSE(parser.allowed_tokens(mask.data(), words));
    for (const char* piece : {"<|tool_call>", "call:search{level:1,mode:<|\"|>a<|\"|>,flag:true}", "<tool_call|>"}) {
      const int32_t id = vocab.id(piece);
      if (id >= 0) {
        parser.feed(&id, 1, piece, recorder);
      } else {
        parser.feed(nullptr, 0, piece, recorder);
      }
    }
    INFO("parallel " << parallel);
    REQUIRE(recorder.message()["tool_calls"].size() == 1);
    if (parallel) {
      CHECK_FALSE(parser.allowed_tokens(mask.data(), words));
    } else {
      REQUIRE(parser.allowed_tokens(mask.data(), words));
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < vocab.size(); ++id)
        if (mask[static_cast<size_t>(id) / 32] >> (id % 32) & 1) allowed.push_back(id);
      std::vector<int32_t> stops = {vocab.id("<turn|>"), vocab.id("<eos>"), vocab.id("<|tool_response>")};
      std::sort(stops.begin(), stops.end());
      CHECK(allowed == stops);
    }
  }
}
