// Every chat-template case against its Python jinja2 render (made the
// transformers way by tools/text/render_oracles.py), byte for byte.
#include <catch2/catch.hpp>
#include <filesystem>

#include "fixtures.hpp"
#include "seatrt/text/chat_messages.hpp"
#include "seatrt/text/chat_template.hpp"

using namespace seatrt::text;
using namespace seatrt::text::testing;

namespace {
const std::map<std::string, std::string> kSpecialTokens = {
    {"bos_token", "<bos>"}, {"eos_token", "<eos>"}, {"unk_token", "<unk>"},
    {"pad_token", "<pad>"}, {"mask_token", "<mask>"}};
}

TEST_CASE("templates: every case renders byte-identical to jinja2") {
  const auto dir = std::filesystem::path(fixture_path("templates/cases"));
  std::vector<std::filesystem::path> cases;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".json") cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 100);
  size_t rendered = 0, errors = 0;
  for (const auto& path : cases) {
    const auto c = nlohmann::ordered_json::parse(read_fixture("templates/cases/" + path.filename().string()));
    INFO("case " << path.filename().string());
    const ChatTemplate tpl(read_fixture("templates/" + c["template"].get<std::string>()), kSpecialTokens);
    ChatTemplateInputs in;
    in.messages = c["messages"];
    in.tools = c["tools"];
    in.kwargs = c["kwargs"];
    in.add_generation_prompt = c["add_generation_prompt"];
    if (c.contains("expected")) {
      CHECK(tpl.render(in) == c["expected"].get<std::string>());
      ++rendered;
    } else {
      // jinja2 raised: so must we; raise_exception's message is reproduced exactly.
      try {
        tpl.render(in);
        FAIL("expected an error: " << c["error"].get<std::string>());
      } catch (const jinja::TemplateError& e) {
        if (c["raised"].get<bool>()) CHECK(e.message() == c["error"].get<std::string>());
        CHECK(e.line() > 0);
      }
      ++errors;
    }
  }
  CHECK(rendered > 100);
  CHECK(errors >= 2);
}

TEST_CASE("templates: special tokens come from tokenizer_config.json and kwargs override them") {
  const auto tpl = ChatTemplate::from_files(fixture_path("templates/gemma4_chat_template.jinja"),
                                            fixture_path("tokenizer/tokenizer_config.json"));
  ChatTemplateInputs in;
  in.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hi"}])");
  CHECK(tpl.render(in) == "<bos><|turn>user\nHi<turn|>\n<|turn>model\n<|channel>thought\n<channel|>");
  in.kwargs = {{"bos_token", "[B]"}, {"enable_thinking", true}};
  CHECK(tpl.render(in) == "[B]<|turn>system\n<|think|>\n<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n");
  const auto tokens = template_special_tokens(read_fixture("tokenizer/tokenizer_config.json"));
  CHECK(tokens.at("eos_token") == "<eos>");
  CHECK(tokens.count("sot_token") == 0);
}

TEST_CASE("templates: string tool-call arguments, once prepared, render as the mapping form does") {
  // The oracle rendered these conversations with arguments as mappings; an
  // OpenAI client sends them as JSON strings.
  for (const char* name : {"tool_response", "tool_call_typed_arguments", "call_response_answer_roundtrip"}) {
    INFO("case " << name);
    const auto c = nlohmann::ordered_json::parse(read_fixture(std::string("templates/cases/chat_template__") + name + ".json"));
    const ChatTemplate tpl(read_fixture("templates/" + c["template"].get<std::string>()), kSpecialTokens);
    ChatTemplateInputs in;
    in.messages = c["messages"];
    for (auto& m : in.messages)
      if (m.contains("tool_calls"))
        for (auto& call : m["tool_calls"]) call["function"]["arguments"] = call["function"]["arguments"].dump();
    in.tools = c["tools"];
    in.kwargs = c["kwargs"];
    in.add_generation_prompt = c["add_generation_prompt"];
    CHECK_THROWS_AS(tpl.render(in), jinja::TemplateError);  // the 07-09 template refuses strings
    prepare_chat_messages(in.messages);
    CHECK(tpl.render(in) == c["expected"].get<std::string>());
  }
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(R"([
    {"role": "assistant", "tool_calls": [], "reasoning_content": "r"},
    {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": ""}},
                                         {"function": {"name": "g", "arguments": null}}]}])");
  prepare_chat_messages(messages);
  CHECK_FALSE(messages[0].contains("tool_calls"));
  CHECK(messages[0]["reasoning"] == "r");
  CHECK(messages[1]["tool_calls"][0]["function"]["arguments"].is_object());
  CHECK(messages[1]["tool_calls"][1]["function"]["arguments"].is_object());
  nlohmann::ordered_json bad = nlohmann::ordered_json::parse(
      R"([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{not json"}}]}])");
  CHECK_THROWS_WITH(prepare_chat_messages(bad), Catch::Contains("arguments is not valid JSON"));
}
