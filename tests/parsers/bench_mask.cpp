// Not a test (hidden tag [.bench]): times the allowed-token mask over a
// Gemma-sized synthetic vocabulary (262144 tokens) at a few grammar states.
//   seatrt_parsers_tests "[.bench]"
#include <catch2/catch.hpp>

#include <chrono>
#include <iostream>
#include <random>
#include <set>

#include "gemma4_parser.hpp"
#include "harness.hpp"

using namespace seatrt::parsers::test;

TEST_CASE("mask time over a 262144-token vocabulary", "[.bench]") {
  std::vector<TestVocab::Token> tokens = gemma4_specials();
  std::mt19937 rng(1);
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:{}[]\"<>|\n";
  std::set<std::string> seen;
  for (const auto& t : tokens) seen.insert(t.bytes);
  for (int b = 0; b < 256; ++b) {
    std::string s(1, static_cast<char>(b));
    if (seen.insert(s).second) tokens.push_back({s, false});
  }
  while (tokens.size() < 262144) {
    const size_t len = 2 + std::uniform_int_distribution<size_t>(0, 9)(rng);
    std::string s;
    for (size_t i = 0; i < len; ++i) s += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    if (seen.insert(s).second) tokens.push_back({s, false});
  }
  const TestVocab vocab(std::move(tokens));
  const std::string tools =
      R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}}])";
  seatrt_parser_request r{};
  r.struct_size = sizeof(r);
  r.request_id = "bench";
  r.tools_json = tools.c_str();
  r.tool_choice_json = "\"required\"";
  r.response_format_json = "";
  r.chat_template_kwargs_json = "{}";
  r.prompt_tail = "";
  r.vocab = vocab.get();
  auto t0 = std::chrono::steady_clock::now();
  seatrt::parsers::gemma4::Gemma4Parser parser("", r);
  auto t1 = std::chrono::steady_clock::now();
  std::cout << "create (trie build, first use): " << std::chrono::duration<double, std::milli>(t1 - t0).count()
            << " ms\n";
  t0 = std::chrono::steady_clock::now();
  seatrt::parsers::gemma4::Gemma4Parser second("", r);
  t1 = std::chrono::steady_clock::now();
  std::cout << "create (trie cached): " << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms\n";
  Recorder rec;
  std::vector<uint32_t> mask(262144 / 32);
  const auto time_mask = [&](const char* where) {
    const int reps = 5;
    const auto a = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) REQUIRE(parser.allowed_tokens(mask.data(), mask.size()));
    const auto b = std::chrono::steady_clock::now();
    size_t allowed = 0;
    for (uint32_t w : mask) allowed += static_cast<size_t>(__builtin_popcount(w));
    std::cout << where << ": " << std::chrono::duration<double, std::milli>(b - a).count() / reps << " ms, "
              << allowed << " tokens allowed\n";
  };
  const auto feed = [&](const std::string& text) {
    for (char c : text) {
      int32_t id = vocab.id(std::string(1, c));
      parser.feed(&id, 1, std::string(1, c), rec);
    }
  };
  time_mask("start");
  int32_t open = vocab.id("<|tool_call>");
  parser.feed(&open, 1, "<|tool_call>", rec);
  feed("call:get_weather{");
  time_mask("object key");
  feed("city:");
  int32_t delim = vocab.id("<|\"|>");
  parser.feed(&delim, 1, "<|\"|>", rec);
  time_mask("inside a string");
  feed("Par");
  parser.feed(&delim, 1, "<|\"|>", rec);
  feed(",days:1");
  time_mask("inside an integer");
}
