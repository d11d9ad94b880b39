// Property: any split of the same output into pieces (whole, single bytes,
// inside UTF-8 sequences, several tokens at once, random sizes) gives the
// same final message and finish_reason as the golden.
#include <catch2/catch.hpp>

#include <random>

#include "golden_runner.hpp"

using namespace seatrt::parsers::test;

namespace {

std::vector<std::string> split_every(const std::string& text, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); i += n) out.push_back(text.substr(i, n));
  return out;
}

std::string joined(const nlohmann::json& c) {
  std::string all;
  for (const auto& t : c["tokens"]) all += t.get<std::string>();
  return all;
}

void check_same(const nlohmann::json& c, const std::vector<std::string>& pieces, const char* how) {
  const auto run = run_golden(c, pieces);
  INFO(c["name"] << " split " << how << " into " << pieces.size() << " pieces");
  CHECK(run.message.dump() == c["message"].dump());
  CHECK(run.finish_reason == c["finish_reason"].get<std::string>());
  CHECK(run.problems.empty());
}

}  // namespace

TEST_CASE("any split of the stream gives the same message", "[parsers][splits]") {
  std::mt19937 rng(12345);
  for (const auto& c : golden_cases()) {
    const std::string all = joined(c);
    check_same(c, {all}, "whole");
    check_same(c, split_every(all, 1), "bytes");
    check_same(c, split_every(all, 3), "3 bytes");
    // Several tokens per piece.
    const auto tokens = token_pieces(c);
    for (size_t group : {2u, 3u, 5u}) {
      std::vector<std::string> pieces;
      for (size_t i = 0; i < tokens.size(); i += group) {
        std::string p;
        for (size_t k = i; k < std::min(tokens.size(), i + group); ++k) p += tokens[k];
        pieces.push_back(p);
      }
      check_same(c, pieces, "token groups");
    }
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<std::string> pieces;
      size_t i = 0;
      while (i < all.size()) {
        const size_t n = std::uniform_int_distribution<size_t>(0, 7)(rng);
        pieces.push_back(all.substr(i, n));  // empty pieces too
        i += n;
      }
      check_same(c, pieces, "random");
    }
  }
}
