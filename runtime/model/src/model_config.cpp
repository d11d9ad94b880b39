#include "seatrt/model/model_config.hpp"
#include "seatrt/host/regular_file.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "seatrt/model/mapped_file.hpp"

namespace seatrt::model {

namespace {

using nlohmann::json;

std::string read_text(const std::filesystem::path& path) {
  std::string text;
  const std::string why = host::read_regular_file(path, text);
  if (!why.empty()) throw CheckpointError(path.string() + ": " + why);
  return text;
}

json parse_object(const std::filesystem::path& path, const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number beyond a double
    throw CheckpointError(path.string() + ": malformed JSON: " + e.what());
  }
  if (!doc.is_object()) throw CheckpointError(path.string() + ": not a JSON object");
  return doc;
}

std::string optional_string(const std::filesystem::path& path, const json& obj, const char* key,
                            const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return {};
  if (!obj[key].is_string())
    throw CheckpointError(path.string() + ": key '" + where + key + "' must be a string, got " +
                          std::string(obj[key].type_name()));
  return obj[key].get<std::string>();
}

}  // namespace

ModelConfig ModelConfig::read(const std::filesystem::path& dir) {
  ModelConfig c;
  const auto config_path = dir / "config.json";
  if (!std::filesystem::exists(config_path)) throw CheckpointError(config_path.string() + ": missing");
  c.config_json = read_text(config_path);
  const json doc = parse_object(config_path, c.config_json);
  c.model_type = optional_string(config_path, doc, "model_type", "");
  if (doc.contains("architectures")) {
    const auto& a = doc["architectures"];
    if (!a.is_array()) throw CheckpointError(config_path.string() + ": key 'architectures' must be an array");
    for (const auto& v : a) {
      if (!v.is_string())
        throw CheckpointError(config_path.string() + ": key 'architectures' must hold strings");
      c.architectures.push_back(v.get<std::string>());
    }
  }
  if (doc.contains("quantization_config") && !doc["quantization_config"].is_null()) {
    const auto& q = doc["quantization_config"];
    if (!q.is_object())
      throw CheckpointError(config_path.string() + ": key 'quantization_config' must be an object, got " +
                            std::string(q.type_name()));
    c.quantization_config_json = q.dump();
    c.quant_method = optional_string(config_path, q, "quant_method", "quantization_config.");
    c.quant_format = optional_string(config_path, q, "format", "quantization_config.");
  }
  const auto gen_path = dir / "generation_config.json";
  if (std::filesystem::exists(gen_path)) {
    c.generation_config_json = read_text(gen_path);
    parse_object(gen_path, c.generation_config_json);
  }
  return c;
}

}  // namespace seatrt::model
