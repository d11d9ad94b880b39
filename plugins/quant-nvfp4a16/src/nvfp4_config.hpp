// quantization_config of a compressed-tensors checkpoint, as far as NVFP4A16
// needs it: which Linears are quantized (targets minus ignore) and the
// weight arguments, all validated with errors naming the key and value.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace seatrt::nvfp4 {

// One `targets` / `ignore` entry: an exact module name, a class name
// ("Linear"), or "re:<regex>" matched at the start of the name (Python
// re.match semantics, as compressed-tensors does).
struct NamePattern {
  std::string text;  // as written
  std::optional<std::regex> regex;
};

struct SchemeConfig {
  std::string format;  // "nvfp4-pack-quantized"
  int group_size = 16;
  std::vector<NamePattern> targets;
  std::vector<NamePattern> ignore;

  // Throws std::invalid_argument naming the offending key and value.
  static SchemeConfig parse(const std::string& quantization_config_json);

  // True when Linear `module` is in the quantize set (targeted, not
  // ignored).  `why` receives the ignore entry or "no target" when false.
  bool quantizes(const std::string& module, std::string* why = nullptr) const;
};

// The format this plugin reads.
inline constexpr const char* kFormat = "nvfp4-pack-quantized";

}  // namespace seatrt::nvfp4
