#include "nvfp4_config.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace seatrt::nvfp4 {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("quantization_config: " + what); }

NamePattern make_pattern(const std::string& key, const std::string& text) {
  NamePattern p{text, std::nullopt};
  if (text.rfind("re:", 0) == 0) {
    try {
      p.regex.emplace(text.substr(3), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      bad(key + " entry '" + text + "' is not a valid regular expression (" + e.what() + ")");
    }
  }
  return p;
}

std::vector<NamePattern> read_patterns(const json& obj, const std::string& key, const std::string& where) {
  std::vector<NamePattern> out;
  if (!obj.contains(key) || obj[key].is_null()) return out;
  if (!obj[key].is_array()) bad(where + key + " must be a list of strings");
  for (const auto& v : obj[key]) {
    if (!v.is_string()) bad(where + key + " must be a list of strings, found " + v.dump());
    out.push_back(make_pattern(where + key, v.get<std::string>()));
  }
  return out;
}

bool matches(const NamePattern& p, const std::string& module) {
  if (p.regex) return std::regex_search(module, *p.regex, std::regex_constants::match_continuous);
  return p.text == module;
}

void check_weights(const std::string& group, const json& w) {
  const std::string where = "config_groups." + group + ".weights.";
  if (!w.is_object()) bad("config_groups." + group + ".weights must be an object");
  const auto need_int = [&](const char* key, int64_t expected) {
    if (!w.contains(key) || !w[key].is_number_integer())
      bad(where + key + " must be an integer (" + std::to_string(expected) + ")");
    if (w[key].get<int64_t>() != expected)
      bad(where + key + " is " + w[key].dump() + "; NVFP4 needs " + std::to_string(expected));
  };
  need_int("num_bits", 4);
  need_int("group_size", 16);
  if (!w.contains("type") || w["type"] != "float")
    bad(where + "type is " + (w.contains("type") ? w["type"].dump() : "missing") + "; NVFP4 needs \"float\"");
  if (w.contains("strategy") && !w["strategy"].is_null() && w["strategy"] != "tensor_group" && w["strategy"] != "group")
    bad(where + "strategy " + w["strategy"].dump() + " is not supported (tensor_group or group)");
  if (w.contains("symmetric") && w["symmetric"] != true) bad(where + "symmetric must be true (asymmetric FP4 does not exist)");
  if (w.contains("scale_dtype") && !w["scale_dtype"].is_null() && w["scale_dtype"] != "torch.float8_e4m3fn" &&
      w["scale_dtype"] != "float8_e4m3fn")
    bad(where + "scale_dtype " + w["scale_dtype"].dump() + " is not supported (float8_e4m3fn)");
  if (w.contains("dynamic") && w["dynamic"] != false) bad(where + "dynamic must be false for stored weights");
}

}  // namespace

SchemeConfig SchemeConfig::parse(const std::string& text) {
  const json q = json::parse(text, nullptr, false);
  if (q.is_discarded() || !q.is_object()) bad("not a JSON object");
  if (!q.contains("quant_method") || !q["quant_method"].is_string())
    bad("quant_method is missing or not a string");
  if (q["quant_method"] != "compressed-tensors")
    bad("quant_method '" + q["quant_method"].get<std::string>() + "' is not compressed-tensors");
  SchemeConfig c;
  if (!q.contains("format") || !q["format"].is_string()) bad("format is missing or not a string");
  c.format = q["format"].get<std::string>();
  if (c.format != kFormat && c.format != "mixed-precision")
    bad("format '" + c.format + "' is not supported: this plugin reads '" + kFormat + "'");
  if (q.contains("quantization_status") && q["quantization_status"].is_string() &&
      q["quantization_status"] != "compressed")
    bad("quantization_status is '" + q["quantization_status"].get<std::string>() +
        "'; only saved compressed checkpoints can be loaded");
  if (!q.contains("config_groups") || !q["config_groups"].is_object() || q["config_groups"].empty())
    bad("config_groups is missing or empty");
  for (const auto& [name, group] : q["config_groups"].items()) {
    if (!group.is_object()) bad("config_groups." + name + " must be an object");
    const std::string group_format =
        group.contains("format") && group["format"].is_string() ? group["format"].get<std::string>() : c.format;
    if (group_format != kFormat)
      bad("config_groups." + name + ".format '" + group_format + "' is not supported: this plugin reads '" + kFormat +
          "'");
    if (group.contains("input_activations") && !group["input_activations"].is_null())
      bad("config_groups." + name + ".input_activations is set (W4A4); this plugin reads weight-only NVFP4A16");
    if (!group.contains("weights")) bad("config_groups." + name + ".weights is missing");
    check_weights(name, group["weights"]);
    auto targets = read_patterns(group, "targets", "config_groups." + name + ".");
    if (targets.empty()) bad("config_groups." + name + ".targets is missing or empty");
    for (auto& t : targets) c.targets.push_back(std::move(t));
  }
  c.ignore = read_patterns(q, "ignore", "");
  return c;
}

bool SchemeConfig::quantizes(const std::string& module, std::string* why) const {
  for (const auto& p : ignore)
    if (matches(p, module)) {
      if (why) *why = "ignore entry '" + p.text + "'";
      return false;
    }
  for (const auto& p : targets)
    // Only Linears are asked about, so the class target "Linear" matches all.
    if (p.text == "Linear" || matches(p, module)) return true;
  if (why) *why = "no target";
  return false;
}

}  // namespace seatrt::nvfp4
