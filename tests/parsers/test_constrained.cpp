// Constrained decoding: for each schema, random logits masked by the parser's
// allowed-token hook always give output that parses and matches the schema,
// in 100% of at least 1000 runs per schema and mode.  Matching is checked by
// an independent validator (schema_validator.cpp); every output is also
// dumped for a second check with Python's jsonschema (validate_outputs.py).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <random>

#include "constrained_vocab.hpp"
#include "gemma4_parser.hpp"
#include "harness.hpp"
#include "schema_validator.hpp"

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
