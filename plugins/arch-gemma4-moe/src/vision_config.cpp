#include "vision_config.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace seatrt::gemma4 {

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("config.json: " + what); }

template <typename T>
T need(const nlohmann::json& j, const char* section, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) bad(std::string(section) + "." + key + " is missing");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    bad(std::string(section) + "." + key + " has the wrong type");
  }
}

template <typename T>
T get_or(const nlohmann::json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<T>();
}

}  // namespace

VisionConfig VisionConfig::parse(const std::string& config_json) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(config_json);
  } catch (const nlohmann::json::exception& e) {
    bad(std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object() || !root.contains("vision_config") || !root["vision_config"].is_object())
    bad("vision_config is missing (the checkpoint has no vision tower)");
  const auto& v = root["vision_config"];
  VisionConfig c;
  c.hidden_size = need<int32_t>(v, "vision_config", "hidden_size");
  c.intermediate_size = need<int32_t>(v, "vision_config", "intermediate_size");
  c.num_layers = need<int32_t>(v, "vision_config", "num_hidden_layers");
  c.num_heads = need<int32_t>(v, "vision_config", "num_attention_heads");
  c.head_dim = get_or<int32_t>(v, "head_dim", c.num_heads > 0 ? c.hidden_size / c.num_heads : 0);
  c.patch_size = get_or<int32_t>(v, "patch_size", 16);
  c.pooling_kernel_size = get_or<int32_t>(v, "pooling_kernel_size", 3);
  c.position_embedding_size = get_or<int32_t>(v, "position_embedding_size", 10240);
  c.rms_eps = get_or<float>(v, "rms_norm_eps", 1e-6f);
  c.standardize = get_or<bool>(v, "standardize", false);
  if (v.contains("rope_parameters") && v["rope_parameters"].is_object()) {
    const auto& rope = v["rope_parameters"];
    if (get_or<std::string>(rope, "rope_type", "axial") != "axial") bad("vision_config.rope_parameters.rope_type must be axial");
    c.rope_theta = get_or<float>(rope, "rope_theta", 100.0f);
  }
  if (get_or<int32_t>(v, "num_key_value_heads", c.num_heads) != c.num_heads)
    bad("vision_config.num_key_value_heads must equal num_attention_heads");
  if (get_or<bool>(v, "use_clipped_linears", false))
    bad("vision_config.use_clipped_linears is not supported (the small E2B/E4B towers)");
  if (get_or<std::string>(v, "hidden_activation", "gelu_pytorch_tanh") != "gelu_pytorch_tanh")
    bad("vision_config.hidden_activation must be gelu_pytorch_tanh");
  if (c.hidden_size <= 0 || c.num_heads <= 0 || c.num_layers <= 0 || c.intermediate_size <= 0 || c.patch_size <= 0 ||
      c.pooling_kernel_size <= 0 || c.position_embedding_size <= 0)
    bad("vision_config sizes must be positive");
  // The 2-D RoPE splits each head in two halves, each rotated in pairs.
  if (c.head_dim <= 0 || c.head_dim % 4 != 0) bad("vision_config.head_dim must be a positive multiple of 4");
  // The pooler reads the hidden states as [patches, heads, head_dim].
  if (int64_t{c.num_heads} * c.head_dim != c.hidden_size)
    bad("vision_config.hidden_size must equal num_attention_heads x head_dim");
  if (!root.contains("text_config") || !root["text_config"].is_object()) bad("text_config is missing");
  c.text_hidden_size = need<int32_t>(root["text_config"], "text_config", "hidden_size");
  return c;
}

}  // namespace seatrt::gemma4
