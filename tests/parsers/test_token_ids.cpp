// Output fed with its token ids: control tokens are known by id, so an
// ordinary piece that spells one stays text; special tokens with no role
// are dropped; and a tokenizer that does not flag its control tokens
// special still has them read as control tokens (the id the vocabulary
// gives for the text), while an ordinary duplicate of that text stays text.
#include <catch2/catch.hpp>

#include "gemma4_parser.hpp"
#include "harness.hpp"

using namespace seatrt::parsers;
using namespace seatrt::parsers::test;

namespace {

// Feeds `feeds` (ids and the text they spell, one feed() each) to a parser
// of one request with a get_weather tool; the message a client would see.
nlohmann::json run_feeds(const TestVocab& vocab,
                         const std::vector<std::pair<std::vector<int32_t>, std::string>>& feeds) {
  const std::string tools =
      R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}])";
  seatrt_parser_request request{};
  request.struct_size = sizeof(request);
  request.request_id = "test";
  request.tools_json = tools.c_str();
  request.tool_choice_json = "\"auto\"";
  request.response_format_json = "";
  request.chat_template_kwargs_json = "{}";
  request.prompt_tail = "";
  request.prompt_tail_len = 0;
  request.vocab = vocab.get();
  gemma4::Gemma4Parser parser("", request);
  Recorder recorder;
  for (const auto& [ids, text] : feeds) {
    recorder.begin_step();
    parser.feed(ids.data(), ids.size(), text, recorder);
  }
  recorder.begin_step();
  parser.finish(SEATRT_FINISH_STOP, recorder);
  return recorder.message();
}

// One feed per token, each looked up by its text.
nlohmann::json run(const TestVocab& vocab, const std::vector<std::string>& texts) {
  std::vector<std::pair<std::vector<int32_t>, std::string>> feeds;
  for (const auto& t : texts) {
    REQUIRE(vocab.id(t) >= 0);
    feeds.push_back({{vocab.id(t)}, t});
  }
  return run_feeds(vocab, feeds);
}

std::vector<TestVocab::Token> vocabulary(bool flag_special) {
  auto tokens = gemma4_specials();
  for (auto& t : tokens) t.special = flag_special;
  for (const char* s : {"Say ", "`<|channel>`", " and ", "<unk>", "call:get_weather", "{city:", "Paris", "}",
                        " done"})
    tokens.push_back({s, std::string(s) == "<unk>"});
  return tokens;
}

const std::vector<std::string> kOutput = {"Say ",        "`<|channel>`", " and ", "<unk>", "<|tool_call>",
                                          "call:get_weather", "{city:", "<|\"|>", "Paris", "<|\"|>",
                                          "}",           "<tool_call|>"};

}  // namespace

TEST_CASE("control tokens are known by id; spelled ones are text", "[parsers][ids]") {
  for (const bool flagged : {true, false}) {
    INFO("control tokens flagged special: " << flagged);
    const TestVocab vocab(vocabulary(flagged));
    const nlohmann::json m = run(vocab, kOutput);
    CHECK(m["content"] == "Say `<|channel>` and ");  // <unk> dropped, the spelled marker kept
    REQUIRE(m["tool_calls"].size() == 1);
    CHECK(m["tool_calls"][0]["function"]["name"] == "get_weather");
    CHECK(m["tool_calls"][0]["function"]["arguments"] == R"({"city": "Paris"})");
  }
}

TEST_CASE("an ordinary duplicate of a control token's text stays text", "[parsers][ids]") {
  auto tokens = vocabulary(false);
  tokens.push_back({"<|tool_call>", false});  // a later, ordinary id with the same text
  const TestVocab vocab(tokens);
  const int32_t canonical = vocab.id("<|tool_call>");
  const int32_t duplicate = static_cast<int32_t>(tokens.size()) - 1;
  REQUIRE(canonical != duplicate);
  const std::string a = "Say ", b = "<|tool_call>", c = " done";
  const nlohmann::json m = run_feeds(vocab, {{{vocab.id(a), duplicate, vocab.id(c)}, a + b + c}});
  CHECK(m["content"] == "Say <|tool_call> done");
  CHECK((!m.contains("tool_calls") || m["tool_calls"].is_null() || m["tool_calls"].empty()));
}
