#include "named_tokens.hpp"
#include "seatrt/host/regular_file.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "seatrt/text/tokenizer.hpp"

namespace seatrt::text {

std::map<std::string, std::string, std::less<>> parse_named_tokens(std::string_view config_json) {
  std::map<std::string, std::string, std::less<>> out;
  if (config_json.empty()) return out;
  nlohmann::json cfg;
  try {
    cfg = nlohmann::json::parse(config_json);
  } catch (const nlohmann::json::exception& e) {
    throw TokenizerError(std::string("tokenizer_config.json is not valid JSON: ") + e.what());
  }
  if (!cfg.is_object()) throw TokenizerError("tokenizer_config.json is not a JSON object");
  for (const auto& [key, value] : cfg.items()) {
    if (key.size() < 6 || key.compare(key.size() - 6, 6, "_token") != 0) continue;
    if (value.is_string()) out[key] = value.get<std::string>();
    else if (value.is_object() && value.contains("content") && value["content"].is_string())
      out[key] = value["content"].get<std::string>();
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::string text;
  const std::string why = host::read_regular_file(path, text);
  if (!why.empty()) throw TokenizerError("cannot open " + path + ": it " + why);
  return text;
}

}  // namespace seatrt::text
