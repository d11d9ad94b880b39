#include "golden_runner.hpp"

#include <fstream>
#include <stdexcept>

#include "gemma4_parser.hpp"
#include "harness.hpp"

namespace seatrt::parsers::test {

const nlohmann::json& golden_cases() {
  static const nlohmann::json cases = [] {
    std::ifstream in(SEATRT_PARSERS_GOLDEN);
    if (!in) throw std::runtime_error("cannot open " SEATRT_PARSERS_GOLDEN);
    return nlohmann::json::parse(in);
  }();
  return cases;
}

std::vector<std::string> token_pieces(const nlohmann::json& c) {
  return c["tokens"].get<std::vector<std::string>>();
}

struct GoldenSession::State {
  explicit State(const nlohmann::json& c) : golden(c) {
    nlohmann::json tools = nlohmann::json::array();
    for (const auto& name : c["tools"]) {
      tools.push_back({{"type", "function"}, {"function", {{"name", name}, {"parameters", {{"type", "object"}}}}}});
    }
    tools_json = tools.dump();
    choice_json = c["tool_choice"].dump();
    kwargs_json = nlohmann::json{{"enable_thinking", c["enable_thinking"]}}.dump();
    tail = c["prompt_tail"].get<std::string>();
    seatrt_parser_request request{};
    request.struct_size = sizeof(request);
    request.request_id = "test";
    request.tools_json = tools_json.c_str();
    request.tool_choice_json = choice_json.c_str();
    request.response_format_json = "";
    request.chat_template_kwargs_json = kwargs_json.c_str();
    request.prompt_tail = tail.c_str();
    request.prompt_tail_len = tail.size();
    request.vocab = nullptr;
    parser = std::make_unique<gemma4::Gemma4Parser>("", request);
  }
  const nlohmann::json& golden;
  std::string tools_json, choice_json, kwargs_json, tail;
  std::unique_ptr<gemma4::Gemma4Parser> parser;
  Recorder recorder;
};

GoldenSession::GoldenSession(const nlohmann::json& c) : state_(std::make_unique<State>(c)) {}
GoldenSession::~GoldenSession() = default;

void GoldenSession::feed(const std::string& piece) {
  state_->recorder.begin_step();
  state_->parser->feed(nullptr, 0, piece, state_->recorder);
}

GoldenRun GoldenSession::finish() {
  Recorder& recorder = state_->recorder;
  recorder.begin_step();
  const int32_t reason = state_->parser->finish(
      state_->golden["finish"] == "length" ? SEATRT_FINISH_LENGTH : SEATRT_FINISH_STOP, recorder);
  GoldenRun run;
  run.message = recorder.message();
  run.steps = recorder.steps();
  run.problems = recorder.problems();
  run.call_ids = recorder.call_ids();
  switch (reason) {
    case SEATRT_FINISH_STOP: run.finish_reason = "stop"; break;
    case SEATRT_FINISH_LENGTH: run.finish_reason = "length"; break;
    case SEATRT_FINISH_TOOL_CALLS: run.finish_reason = "tool_calls"; break;
    default: run.finish_reason = "other"; break;
  }
  return run;
}

GoldenRun run_golden(const nlohmann::json& c, const std::vector<std::string>& pieces) {
  GoldenSession session(c);
  for (const std::string& piece : pieces) session.feed(piece);
  return session.finish();
}

}  // namespace seatrt::parsers::test
