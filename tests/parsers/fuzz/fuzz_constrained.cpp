// libFuzzer target: the constrained-decoding engine (schema compiler,
// grammar matcher, vocabulary trie walk).  Input byte 0 picks the mode:
//  - high bit clear: a fixed schema and mode; the following bytes choose,
//    at each step, which allowed token to take (or, when a byte is 0xFF, a
//    token the mask forbids).  When the output ends on a stop token it must
//    parse and match the schema, and the mask is never empty.
//  - high bit set: the rest is a JSON schema text for response_format
//    json_schema; compiling it must succeed or refuse with invalid_argument,
//    then a few masked steps run.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../constrained_vocab.hpp"
#include "../schema_validator.hpp"
#include "gemma4_parser.hpp"
#include "harness.hpp"

namespace {

using nlohmann::json;
using namespace seatrt::parsers::test;

const TestVocab& vocab() {
  static const TestVocab v = constrained_vocab();
  return v;
}

const char* kSchemas[] = {
    R"({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"unit":{"enum":["c","f"]},"tags":{"type":"array","items":{"type":"number"},"maxItems":2}},"required":["city"]})",
    R"({"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"object","properties":{"b":{"type":["boolean","null"]}},"required":["b"]}]}},"required":["a"]})",
    R"({"type":"object"})",
    // Recursive: random choices run into the Matcher's nesting bound.
    R"({"type":"object","properties":{"n":{"$ref":"#/$defs/node"}},"required":["n"],"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["v"]}}})",
};

struct Strings {
  std::string tools, choice, format, kwargs;
};

seatrt_parser_request make_request(const Strings& s) {
  seatrt_parser_request r{};
  r.struct_size = sizeof(r);
  r.request_id = "fuzz";
  r.tools_json = s.tools.c_str();
  r.tool_choice_json = s.choice.c_str();
  r.response_format_json = s.format.c_str();
  r.chat_template_kwargs_json = s.kwargs.c_str();
  r.prompt_tail = "";
  r.vocab = vocab().get();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  Strings s;
  json schema;
  bool tool_mode = false;
  if (mode & 0x80) {
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    schema = json::parse(text, nullptr, false);
    if (schema.is_discarded()) return 0;
    s.format = json{{"type", "json_schema"}, {"json_schema", {{"schema", schema}}}}.dump();
  } else {
    schema = json::parse(kSchemas[mode & 3]);
    tool_mode = (mode & 4) != 0;
    if (tool_mode) {
      s.tools = json::array({{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", schema}}}}}).dump();
      s.choice = (mode & 8) ? "\"required\"" : R"({"type":"function","function":{"name":"f"}})";
    } else {
      s.format = json{{"type", "json_schema"}, {"json_schema", {{"schema", schema}}}}.dump();
    }
  }
  s.kwargs = (mode & 16) ? R"({"enable_thinking":true})" : "{}";
  const seatrt_parser_request request = make_request(s);
  std::unique_ptr<seatrt::parsers::gemma4::Gemma4Parser> parser;
  try {
    parser = std::make_unique<seatrt::parsers::gemma4::Gemma4Parser>(
        "max_string_bytes = 6\nmax_thought_bytes = 6\nmax_array_items = 2\nmax_calls = 2\nany_depth = 2\n", request);
  } catch (const std::invalid_argument&) {
    return 0;  // refused with a message: fine
  }
  Recorder rec;
  const size_t words = (static_cast<size_t>(vocab().size()) + 31) / 32;
  std::vector<uint32_t> mask(words);
  bool obeyed = true;
  const size_t steps = (mode & 0x80) ? 16 : size - 1;
  for (size_t i = 0; i < steps; ++i) {
    if (!parser->allowed_tokens(mask.data(), words)) break;
    std::vector<int32_t> allowed;
    for (int32_t id = 0; id < vocab().size(); ++id) {
      if (mask[static_cast<size_t>(id) / 32] >> (id % 32) & 1) allowed.push_back(id);
    }
    if (allowed.empty()) __builtin_trap();  // a dead end
    const uint8_t choice = (mode & 0x80) ? static_cast<uint8_t>(i * 37) : data[1 + i];
    int32_t id = allowed[choice % allowed.size()];
    if (choice == 0xFF) {
      id = static_cast<int32_t>(i % static_cast<size_t>(vocab().size()));
      obeyed = obeyed && std::count(allowed.begin(), allowed.end(), id) > 0;
    }
    const std::string& bytes = vocab().bytes(id);
    if (bytes == "<turn|>" || bytes == "<eos>" || bytes == "<|tool_response>") {
      parser->finish(SEATRT_FINISH_STOP, rec);
      if (!obeyed || (mode & 0x80)) return 0;
      const json m = rec.message();
      if (tool_mode) {
        if (!m.contains("tool_calls")) __builtin_trap();
        for (const auto& call : m["tool_calls"]) {
          const json args = json::parse(call["function"]["arguments"].get<std::string>(), nullptr, false);
          if (args.is_discarded() || validate(args, schema, schema)) __builtin_trap();
        }
      } else {
        const json value = json::parse(m["content"].get<std::string>(), nullptr, false);
        if (value.is_discarded() || validate(value, schema, schema)) __builtin_trap();
      }
      return 0;
    }
    parser->feed(&id, 1, bytes, rec);
  }
  parser->finish(SEATRT_FINISH_LENGTH, rec);
  return 0;
}
