// Golden cases: the exact OpenAI message and the exact streamed delta
// sequence (one step per token, then finish) for each model output.  The
// expected values come from the independent Python oracle
// tools/parsers/gemma4_oracle.py, never from this code.
#include <catch2/catch.hpp>

#include "golden_runner.hpp"

using seatrt::parsers::test::golden_cases;
using seatrt::parsers::test::run_golden;
using seatrt::parsers::test::token_pieces;

TEST_CASE("golden cases: message, delta sequence and finish_reason", "[parsers][golden]") {
  REQUIRE(golden_cases().size() >= 20);
  for (const auto& c : golden_cases()) {
    DYNAMIC_SECTION(c["name"].get<std::string>()) {
      const auto run = run_golden(c, token_pieces(c));
      INFO("case " << c["name"]);
      CHECK(run.message.dump() == c["message"].dump());
      CHECK(run.finish_reason == c["finish_reason"].get<std::string>());
      REQUIRE(run.steps.size() == c["deltas"].size());
      for (size_t i = 0; i < run.steps.size(); ++i) {
        INFO("step " << i);
        CHECK(run.steps[i].dump() == c["deltas"][i].dump());
      }
      CHECK(run.problems.empty());
    }
  }
}

TEST_CASE("no raw control token ever reaches content, reasoning or arguments", "[parsers][golden]") {
  for (const auto& c : golden_cases()) {
    const auto run = run_golden(c, token_pieces(c));
    const std::string all = run.message.dump();
    for (const char* marker : {"<|\\\"|>", "<|tool_call>", "<tool_call|>", "<|channel>", "<channel|>", "<turn|>",
                               "<|\"", "\"|>"}) {
      INFO(c["name"] << " contains " << marker);
      CHECK(all.find(marker) == std::string::npos);
    }
  }
}

TEST_CASE("every call gets its own id", "[parsers][golden]") {
  for (const auto& c : golden_cases()) {
    const auto a = run_golden(c, token_pieces(c));
    const auto b = run_golden(c, token_pieces(c));
    for (const auto& id : a.call_ids) {
      for (const auto& other : b.call_ids) CHECK(id != other);
    }
  }
}
