// A model's chat template, rendered the way Hugging Face transformers'
// apply_chat_template renders it (same variables, same Jinja settings).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "seatrt/text/jinja/template.hpp"

namespace seatrt::text {

struct ChatTemplateInputs {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null when the request declares none
  bool add_generation_prompt = true;
  // Extra template variables (chat_template_kwargs, e.g. enable_thinking);
  // they override the special tokens of the same name.
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
};

class ChatTemplate {
 public:
  // `special_tokens`: bos_token, eos_token, ... as tokenizer_config.json names them.
  // Throws jinja::TemplateError (with line) when the template does not parse.
  ChatTemplate(const std::string& source, std::map<std::string, std::string> special_tokens);

  // Reads a template file and, when config_path is not empty, the special
  // tokens of a tokenizer_config.json.
  static ChatTemplate from_files(const std::string& template_path, const std::string& config_path);

  // Renders; throws jinja::TemplateError (with line) on template errors,
  // raise_exception() included.
  std::string render(const ChatTemplateInputs& inputs, const jinja::Limits& limits = {}) const;

 private:
  jinja::Template template_;
  std::map<std::string, std::string> special_tokens_;
};

// The special tokens transformers passes to templates (bos_token, eos_token,
// unk_token, sep_token, pad_token, cls_token, mask_token) from a
// tokenizer_config.json text; throws TokenizerError for malformed JSON.
std::map<std::string, std::string> template_special_tokens(std::string_view tokenizer_config_json);

// JSON -> template value, keeping object key order.
jinja::Value to_value(const nlohmann::ordered_json& json);

}  // namespace seatrt::text
