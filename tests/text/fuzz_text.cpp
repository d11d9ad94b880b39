// libFuzzer target (not a CTest test): arbitrary bytes as a Jinja template
// (rendered with a small chat context) and as tokenizer input.  Any crash,
// sanitizer report or uncaught exception is a bug; TemplateError is fine.
//   clang++ build: cmake -DCMAKE_CXX_COMPILER=clang++ ... && ninja fuzz_text
//   ./bin/fuzz_text -max_total_time=300 -max_len=4096
#include <cstddef>
#include <cstdint>
#include <string>

#include "seatrt/text/chat_template.hpp"
#include "seatrt/text/detokenizer.hpp"
#include "seatrt/text/hf_tokenizer.hpp"

namespace {
const seatrt::text::Tokenizer& tokenizer() {
  static const auto tok = seatrt::text::load_hf_tokenizer(std::string(SEATRT_FIXTURES) + "/tokenizer/tokenizer.json");
  return *tok;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  try {
    seatrt::text::ChatTemplate tpl(input, {{"bos_token", "<bos>"}});
    seatrt::text::ChatTemplateInputs in;
    in.messages = nlohmann::ordered_json::parse(
        R"([{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "t"}]},
            {"role": "assistant", "content": "a", "tool_calls": [{"function": {"name": "f", "arguments": {"x": [1, 2.5, null]}}}]}])");
    seatrt::text::jinja::Limits limits;
    limits.max_steps = 200000;
    limits.max_output_bytes = 1 << 20;
    tpl.render(in, limits);
  } catch (const seatrt::text::jinja::TemplateError&) {
  }
  const auto& tok = tokenizer();
  const auto ids = tok.encode(input, false);
  if (tok.decode(ids, false) != tok.decode(ids, false)) __builtin_trap();
  seatrt::text::StreamingDetokenizer stream(tok, false);
  std::string streamed;
  for (const int32_t id : ids) streamed += stream.push(id);
  streamed += stream.finish();
  if (streamed != tok.decode(ids, false)) __builtin_trap();
  return 0;
}
