// Every chat-template case against its Python jinja2 render (made the
// transformers way by tools/text/render_oracles.py), byte for byte.
#include <catch2/catch.hpp>
#include <filesystem>

#include "fixtures.hpp"
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
