// The synthetic vocabulary of the constrained-decoding tests: every printable
// ASCII byte, merged pieces that cross JSON/native structure, multi-byte
// UTF-8 pieces and lone UTF-8 bytes (byte fallback), plain-text lookalikes of
// control tokens, and the Gemma-4 control tokens as specials.
#pragma once

#include "harness.hpp"

namespace seatrt::parsers::test {

inline TestVocab constrained_vocab() {
  std::vector<TestVocab::Token> tokens = gemma4_specials();
  for (int c = 0x20; c < 0x7F; ++c) tokens.push_back({std::string(1, static_cast<char>(c)), false});
  for (const char* s : {"\n", "\t", "true", "false", "null", "city", "days", "unit", "opts", "hourly", "tags", "items",
                        "id", "price", "ok", "level", "mode", "flag", "note", "value", "path", "celsius",
                        "fahrenheit", "get_weather", "search", "call", "call:", "get_", "weather", ":{", "},", "\":\"",
                        "\",\"", "{\"", "\"}", "[\"", "\"]", "12", "3.", "0.5", "e+", "-1", "00", "ab", "abc",
                        "\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80", "\xE6", "\x97", "\xA5", "\xFF",
                        "<|", "|>", "\"|>", "<tool", "call|>", "<|\"", "thought", "\n\n", " the", "\\n", "\\\""}) {
    tokens.push_back({s, false});
  }
  return TestVocab(std::move(tokens));
}

}  // namespace seatrt::parsers::test
