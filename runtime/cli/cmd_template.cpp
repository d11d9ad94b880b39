// `seatrt template render`: prints the prompt a chat template makes, exactly
// as transformers' apply_chat_template would, so operators and tests can see
// what the model sees.  A template error prints its line and message, exit 1.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "command.hpp"
#include "seatrt/text/chat_template.hpp"
#include "seatrt/text/tokenizer.hpp"

namespace seatrt::cli {
namespace {

constexpr const char* kUsage =
    "usage: seatrt template render --template FILE --messages FILE.json [--tools FILE.json]\n"
    "         [--kwargs JSON] [--no-generation-prompt] [--tokenizer-config FILE]\n"
    "  bos_token/eos_token/... come from --tokenizer-config, else from a\n"
    "  tokenizer_config.json next to the template.  --kwargs is JSON text, or @FILE.\n";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::ordered_json parse_json(const std::string& text, const std::string& what) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(what + " is not valid JSON: " + e.what());
  }
}

int render(std::span<const std::string> args) {
  std::string template_path, messages_path, tools_path, kwargs_text, config_path;
  bool generation_prompt = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw std::runtime_error(a + " needs a value");
      return args[++i];
    };
    if (a == "--template") template_path = value();
    else if (a == "--messages") messages_path = value();
    else if (a == "--tools") tools_path = value();
    else if (a == "--kwargs") kwargs_text = value();
    else if (a == "--tokenizer-config") config_path = value();
    else if (a == "--no-generation-prompt") generation_prompt = false;
    else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "seatrt template render: unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (template_path.empty() || messages_path.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (config_path.empty()) {
    const auto beside = std::filesystem::path(template_path).parent_path() / "tokenizer_config.json";
    if (std::filesystem::exists(beside)) config_path = beside.string();
  }
  text::ChatTemplateInputs inputs;
  inputs.messages = parse_json(read_text(messages_path), messages_path);
  if (inputs.messages.is_object() && inputs.messages.contains("messages"))
    inputs.messages = nlohmann::ordered_json(inputs.messages["messages"]);
  if (!inputs.messages.is_array()) throw std::runtime_error(messages_path + ": expected a JSON array of messages");
  if (!tools_path.empty()) inputs.tools = parse_json(read_text(tools_path), tools_path);
  if (!kwargs_text.empty()) {
    const bool from_file = kwargs_text[0] == '@';
    inputs.kwargs = parse_json(from_file ? read_text(kwargs_text.substr(1)) : kwargs_text, "--kwargs");
    if (!inputs.kwargs.is_object()) throw std::runtime_error("--kwargs must be a JSON object");
  }
  inputs.add_generation_prompt = generation_prompt;
  try {
    const auto tpl = text::ChatTemplate::from_files(template_path, config_path);
    const std::string prompt = tpl.render(inputs);
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    return 0;
  } catch (const text::jinja::TemplateError& e) {
    std::fprintf(stderr, "seatrt template render: %s:%d: %s\n", template_path.c_str(), e.line(), e.message().c_str());
    return 1;
  }
}

int run(std::span<const std::string> args) {
  try {
    if (args.empty() || args[0] != "render") {
      std::fputs(kUsage, stderr);
      return 2;
    }
    return render(args.subspan(1));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt template render: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("template", "template render --template F --messages F",
                   "print the prompt a chat template renders (as transformers does)", seatrt::cli::run)
