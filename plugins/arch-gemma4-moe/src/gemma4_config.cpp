#include "gemma4_config.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace seatrt::gemma4 {

namespace {

using nlohmann::json;

// Typed access to config keys; every error names the key's full path.
class Keys {
 public:
  Keys(const json& obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::invalid_argument("config.json: key " + path_ + key + " " + what);
  }
  bool has(const std::string& key) const { return obj_.contains(key) && !obj_[key].is_null(); }
  const json& raw(const std::string& key) const {
    if (!has(key)) fail(key, "is missing");
    return obj_[key];
  }
  int64_t integer(const std::string& key) const {
    const json& v = raw(key);
    if (!v.is_number_integer()) fail(key, std::string("must be an integer, got ") + v.type_name() + " " + v.dump());
    return v.get<int64_t>();
  }
  int32_t positive(const std::string& key, int64_t limit = 1 << 30) const {
    const int64_t v = integer(key);
    if (v <= 0 || v > limit) fail(key, "must be a positive integer, got " + std::to_string(v));
    return static_cast<int32_t>(v);
  }
  double number(const std::string& key) const {
    const json& v = raw(key);
    if (!v.is_number()) fail(key, std::string("must be a number, got ") + v.type_name() + " " + v.dump());
    return v.get<double>();
  }
  bool boolean(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!obj_[key].is_boolean()) fail(key, std::string("must be true or false, got ") + obj_[key].dump());
    return obj_[key].get<bool>();
  }
  std::string string(const std::string& key) const {
    const json& v = raw(key);
    if (!v.is_string()) fail(key, std::string("must be a string, got ") + v.type_name() + " " + v.dump());
    return v.get<std::string>();
  }
  Keys object(const std::string& key) const {
    const json& v = raw(key);
    if (!v.is_object()) fail(key, std::string("must be an object, got ") + v.type_name());
    return Keys(v, path_ + key + ".");
  }
  const json& obj() const { return obj_; }
  const std::string& path() const { return path_; }

 private:
  const json& obj_;
  std::string path_;
};

std::vector<float> inverse_frequencies(const Keys& rope, int32_t head_dim) {
  const std::string type = rope.has("rope_type") ? rope.string("rope_type") : "default";
  const double theta = rope.number("rope_theta");
  if (!(theta > 1.0)) rope.fail("rope_theta", "must be > 1");
  const double factor = rope.has("factor") ? rope.number("factor") : 1.0;
  const double partial = rope.has("partial_rotary_factor") ? rope.number("partial_rotary_factor") : 1.0;
  if (!(factor > 0.0)) rope.fail("factor", "must be positive");
  if (!(partial > 0.0 && partial <= 1.0)) rope.fail("partial_rotary_factor", "must be in (0, 1]");
  const auto half = static_cast<std::size_t>(head_dim / 2);
  std::vector<float> inv(half, 0.0f);
  // Frequencies are computed in fp32 exactly as the reference does:
  // 1 / theta^(float(2i) / dim).
  const auto base = static_cast<float>(theta);
  if (type == "default") {
    // Rotates int(head_dim * partial) dims; the rest (if any) pass through.
    const auto dim = static_cast<int32_t>(head_dim * partial);
    for (int32_t i = 0; 2 * i < dim; ++i)
      inv[static_cast<std::size_t>(i)] =
          1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(dim)) / static_cast<float>(factor);
  } else if (type == "proportional") {
    // int(partial * head_dim // 2) rotated pairs with the FULL head_dim in
    // the exponent's denominator; the remaining pairs get frequency 0.
    const auto angles = static_cast<int32_t>(std::floor(partial * head_dim / 2.0));
    for (int32_t i = 0; i < angles && static_cast<std::size_t>(i) < half; ++i)
      inv[static_cast<std::size_t>(i)] =
          1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(head_dim)) / static_cast<float>(factor);
  } else {
    rope.fail("rope_type", "'" + type + "' is not supported (default, proportional)");
  }
  return inv;
}

}  // namespace

int32_t probe_score(const std::string& config_json) {
  const json doc = json::parse(config_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return 0;
  const std::string type = doc.value("model_type", "");
  if (type == "gemma4" || type == "gemma4_text") return 100;
  return 0;
}

Config Config::parse(const std::string& config_json) {
  const json doc = json::parse(config_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw std::invalid_argument("config.json: not a JSON object");
  const Keys top(doc, "");
  Config c;
  const std::string type = top.string("model_type");
  const json* text_obj = &doc;
  std::string path;
  if (type == "gemma4") {
    text_obj = &top.raw("text_config");
    if (!text_obj->is_object()) top.fail("text_config", "must be an object");
    path = "text_config.";
    c.prefix = "model.language_model.";
  } else if (type == "gemma4_text") {
    c.prefix = "model.";
  } else {
    top.fail("model_type", "is '" + type + "', not gemma4 / gemma4_text");
  }
  const Keys t(*text_obj, path);

  c.vocab_size = t.positive("vocab_size");
  c.hidden_size = t.positive("hidden_size");
  c.num_layers = t.positive("num_hidden_layers", 4096);
  c.num_heads = t.positive("num_attention_heads", 4096);
  const int32_t kv_heads = t.positive("num_key_value_heads", 4096);
  const int32_t head_dim = t.positive("head_dim", 1 << 16);
  c.intermediate_size = t.positive("intermediate_size");
  c.rms_eps = static_cast<float>(t.number("rms_norm_eps"));
  if (!(c.rms_eps >= 0.0f && c.rms_eps < 1.0f)) t.fail("rms_norm_eps", "must be in [0, 1)");
  c.max_position = t.positive("max_position_embeddings");
  c.final_softcap = t.has("final_logit_softcapping") ? static_cast<float>(t.number("final_logit_softcapping")) : 0.0f;
  c.attn_softcap = t.has("attn_logit_softcapping") ? static_cast<float>(t.number("attn_logit_softcapping")) : 0.0f;
  const std::string act = t.string("hidden_activation");
  if (act != "gelu_pytorch_tanh") t.fail("hidden_activation", "is '" + act + "'; Gemma-4 uses gelu_pytorch_tanh");
  if (t.has("hidden_size_per_layer_input") && t.integer("hidden_size_per_layer_input") != 0)
    t.fail("hidden_size_per_layer_input", "is non-zero: per-layer inputs (E2B/E4B) are not supported");
  if (t.has("num_kv_shared_layers") && t.integer("num_kv_shared_layers") != 0)
    t.fail("num_kv_shared_layers", "is non-zero: KV sharing is not supported");
  if (t.boolean("use_double_wide_mlp", false)) t.fail("use_double_wide_mlp", "is true: not supported");
  if (!t.boolean("tie_word_embeddings", top.boolean("tie_word_embeddings", true)))
    t.fail("tie_word_embeddings", "is false: Gemma-4 ties the LM head to the embedding");

  c.moe = t.boolean("enable_moe_block", false);
  if (c.moe) {
    c.num_experts = t.positive("num_experts", 1 << 16);
    c.top_k = t.positive("top_k_experts", 1 << 16);
    if (c.top_k > c.num_experts) t.fail("top_k_experts", "exceeds num_experts");
    c.moe_intermediate_size = t.positive("moe_intermediate_size");
  }

  // Full-attention geometry: raw keys first, then per_layer_config.
  const json* plc = t.has("per_layer_config") && t.obj()["per_layer_config"].is_object() ? &t.obj()["per_layer_config"]
                                                                                       : nullptr;
  const json& types = t.raw("layer_types");
  if (!types.is_array() || static_cast<int64_t>(types.size()) != c.num_layers)
    t.fail("layer_types", "must be a list of num_hidden_layers (" + std::to_string(c.num_layers) + ") strings");
  const int32_t window = t.positive("sliding_window");
  const bool k_eq_v = t.boolean("attention_k_eq_v", false);
  const Keys rope = t.object("rope_parameters");
  const Keys rope_sliding = rope.object("sliding_attention");
  const Keys rope_full = rope.object("full_attention");

  for (int32_t i = 0; i < c.num_layers; ++i) {
    const json& lt = types[static_cast<std::size_t>(i)];
    if (!lt.is_string() || (lt != "sliding_attention" && lt != "full_attention"))
      t.fail("layer_types", "entry " + std::to_string(i) + " must be \"sliding_attention\" or \"full_attention\"");
    LayerGeometry g;
    g.full = lt == "full_attention";
    if (g.full) {
      const json* layer_plc = plc && plc->contains(std::to_string(i)) ? &(*plc)[std::to_string(i)] : nullptr;
      if (t.has("global_head_dim"))
        g.head_dim = t.positive("global_head_dim", 1 << 16);
      else if (layer_plc && layer_plc->contains("head_dim") && (*layer_plc)["head_dim"].is_number_integer())
        g.head_dim = (*layer_plc)["head_dim"].get<int32_t>();
      else
        g.head_dim = head_dim;
      g.k_eq_v = k_eq_v;
      if (k_eq_v && t.has("num_global_key_value_heads"))
        g.kv_heads = t.positive("num_global_key_value_heads", 4096);
      else if (k_eq_v && layer_plc && layer_plc->contains("num_key_value_heads") &&
               (*layer_plc)["num_key_value_heads"].is_number_integer())
        g.kv_heads = (*layer_plc)["num_key_value_heads"].get<int32_t>();
      else
        g.kv_heads = kv_heads;
      g.window = 0;
      g.inv_freq = inverse_frequencies(rope_full, g.head_dim);
    } else {
      g.head_dim = head_dim;
      g.kv_heads = kv_heads;
      g.window = window;
      g.inv_freq = inverse_frequencies(rope_sliding, g.head_dim);
    }
    if (g.head_dim % 2) t.fail(g.full ? "global_head_dim" : "head_dim", "must be even");
    if (c.num_heads % g.kv_heads)
      t.fail(g.full ? "num_global_key_value_heads" : "num_key_value_heads",
             "must divide num_attention_heads (" + std::to_string(c.num_heads) + ")");
    c.layers.push_back(std::move(g));
  }
  return c;
}

}  // namespace seatrt::gemma4
