// config.json and generation_config.json of a checkpoint directory, read as
// JSON text for the plugins (the architecture plugin interprets the model
// keys itself) plus the few top-level facts the host uses to pick plugins.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace seatrt::model {

struct ModelConfig {
  std::string config_json;             // config.json verbatim
  std::string generation_config_json;  // generation_config.json verbatim, "" when absent
  std::string quantization_config_json;  // config.json's quantization_config re-serialised, "" when none
  std::string model_type;              // "" when absent
  std::vector<std::string> architectures;
  std::string quant_method;  // quantization_config.quant_method, "" when none
  std::string quant_format;  // quantization_config.format, "" when none

  // Reads <dir>/config.json (required) and generation_config.json
  // (optional).  Throws CheckpointError naming the file and key for
  // malformed JSON or a key of the wrong type.
  static ModelConfig read(const std::filesystem::path& dir);
};

}  // namespace seatrt::model
