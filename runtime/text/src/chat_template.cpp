#include "seatrt/text/chat_template.hpp"

#include "named_tokens.hpp"
#include "utf8.hpp"

#include <stdexcept>

namespace seatrt::text {

using jinja::Value;

Value to_value(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      return u <= static_cast<uint64_t>(INT64_MAX) ? Value::integer(static_cast<int64_t>(u))
                                                   : Value::number(static_cast<double>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::number(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      jinja::List items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(to_value(item));
      return Value::from_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      jinja::Dict items;
      items.reserve(j.size());
      for (const auto& [k, v] : j.items()) items.emplace_back(k, to_value(v));
      return Value::from_dict(std::move(items));
    }
    default: return Value::none();
  }
}

std::map<std::string, std::string> template_special_tokens(std::string_view tokenizer_config_json) {
  std::map<std::string, std::string> out;
  const auto named = parse_named_tokens(tokenizer_config_json);
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    if (const auto it = named.find(key); it != named.end()) out[key] = it->second;
  }
  return out;
}

ChatTemplate::ChatTemplate(const std::string& source, std::map<std::string, std::string> special_tokens)
    : template_(source, jinja::Options{}), special_tokens_(std::move(special_tokens)) {}

ChatTemplate ChatTemplate::from_files(const std::string& template_path, const std::string& config_path) {
  const std::string source = read_file(template_path);
  if (!utf8::is_valid(source))
    throw std::runtime_error(template_path + ": the chat template is not valid UTF-8");
  std::map<std::string, std::string> tokens;
  if (!config_path.empty()) tokens = template_special_tokens(read_file(config_path));
  try {
    return ChatTemplate(source, std::move(tokens));
  } catch (const jinja::TemplateError& e) {  // name the file: the message has only a line
    throw std::runtime_error(template_path + ": " + e.what());
  }
}

std::string ChatTemplate::render(const ChatTemplateInputs& inputs, const jinja::Limits& limits) const {
  // apply_chat_template's variables: messages, tools, documents,
  // add_generation_prompt, then the special tokens, then the kwargs.
  jinja::Dict vars;
  auto set = [&](const std::string& key, Value value) {
    for (auto& [k, v] : vars)
      if (k == key) {
        v = std::move(value);
        return;
      }
    vars.emplace_back(key, std::move(value));
  };
  set("messages", to_value(inputs.messages));
  set("tools", to_value(inputs.tools));
  set("documents", Value::none());
  set("add_generation_prompt", Value::boolean(inputs.add_generation_prompt));
  for (const auto& [k, v] : special_tokens_) set(k, Value::string(v));
  if (inputs.kwargs.is_object())
    for (const auto& [k, v] : inputs.kwargs.items()) set(k, to_value(v));
  return template_.render(vars, limits);
}

}  // namespace seatrt::text
