// libFuzzer target: the native-syntax parser and streaming state machine.
// Input: [flags][split seed][model output...].  Checks, beyond "no crash,
// no hang, no sanitizer report": feeding the output whole or in pieces
// gives the same events; everything emitted is valid UTF-8; the arguments of
// every call are valid JSON once the output has ended.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "gemma4_parser.hpp"
#include "harness.hpp"
#include "utf8.hpp"

namespace {

using seatrt::parsers::test::Recorder;

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const int n = seatrt::parsers::gemma4::utf8_sequence_length(std::string_view(s).substr(i));
    if (n <= 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

nlohmann::json run(uint8_t flags, const std::string& text, uint8_t seed, bool split) {
  const std::string tools = R"([{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"f"}}])";
  const char* choices[] = {"\"auto\"", "\"none\"", "\"auto\"", R"({"type":"function","function":{"name":"f"}})"};
  const std::string kwargs = (flags & 4) ? R"({"enable_thinking":true})" : "{}";
  const std::string tail = (flags & 8) ? "<|turn>model\n<|channel>thought\n" : ((flags & 16) ? "<|channel>" : "");
  seatrt_parser_request r{};
  r.struct_size = sizeof(r);
  r.request_id = "fuzz";
  r.tools_json = tools.c_str();
  r.tool_choice_json = choices[flags & 3];
  r.response_format_json = "";
  r.chat_template_kwargs_json = kwargs.c_str();
  r.prompt_tail = tail.c_str();
  r.prompt_tail_len = tail.size();
  seatrt::parsers::gemma4::Gemma4Parser parser("", r);
  Recorder rec;
  if (!split) {
    parser.feed(nullptr, 0, text, rec);
  } else {
    uint32_t state = seed * 2654435761u + 1;
    for (size_t i = 0; i < text.size();) {
      state = state * 1103515245u + 12345u;
      const size_t n = (state >> 16) % 9;  // 0..8 bytes, empty pieces too
      parser.feed(nullptr, 0, std::string_view(text).substr(i, n), rec);
      i += n;
    }
  }
  const int32_t reason = parser.finish((flags & 32) ? SEATRT_FINISH_LENGTH : SEATRT_FINISH_STOP, rec);
  nlohmann::json m = rec.message();
  m["finish"] = reason;
  if (!rec.problems().empty()) __builtin_trap();
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0], seed = data[1];
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  const nlohmann::json whole = run(flags, text, seed, false);
  const nlohmann::json pieces = run(flags, text, seed, true);
  if (whole != pieces) __builtin_trap();
  if (whole["content"].is_string() && !valid_utf8(whole["content"].get<std::string>())) __builtin_trap();
  if (whole.contains("reasoning_content") && !valid_utf8(whole["reasoning_content"].get<std::string>())) {
    __builtin_trap();
  }
  if (whole.contains("tool_calls")) {
    for (const auto& call : whole["tool_calls"]) {
      if (!nlohmann::json::accept(call["function"]["arguments"].get<std::string>())) __builtin_trap();
    }
  }
  return 0;
}
