// Runs a golden case (tests/parsers/golden/gemma4_golden.json, made by
// tools/parsers/make_golden.py) through a Gemma4Parser, fed in given pieces.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace seatrt::parsers::test {

struct GoldenRun {
  nlohmann::json message;
  std::vector<nlohmann::json> steps;
  std::string finish_reason;
  std::vector<std::string> problems;
  std::vector<std::string> call_ids;
};

// One request of a golden case, fed piece by piece.
class GoldenSession {
 public:
  explicit GoldenSession(const nlohmann::json& golden_case);
  ~GoldenSession();
  void feed(const std::string& piece);
  GoldenRun finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

const nlohmann::json& golden_cases();
// The case's output split as its tokens.
std::vector<std::string> token_pieces(const nlohmann::json& golden_case);
GoldenRun run_golden(const nlohmann::json& golden_case, const std::vector<std::string>& pieces);

}  // namespace seatrt::parsers::test
