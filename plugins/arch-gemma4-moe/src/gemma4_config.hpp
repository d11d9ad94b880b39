// The Gemma-4 text decoder's hyper-parameters, read from config.json (the
// multimodal `gemma4` form with text_config, or a bare `gemma4_text`).
// global_head_dim / num_global_key_value_heads are read from the raw keys
// (as released by Google); per_layer_config is a fallback.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seatrt::gemma4 {

struct LayerGeometry {
  bool full = false;     // full attention (else sliding)
  int32_t head_dim = 0;
  int32_t kv_heads = 0;
  int32_t window = 0;    // 0 for full layers
  bool k_eq_v = false;   // no v_proj: V = v_norm(raw k_proj)
  std::vector<float> inv_freq;  // [head_dim / 2], zero for unrotated pairs
};

struct Config {
  std::string prefix;  // tensor-name prefix of the text model, "model.language_model."
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t num_layers = 0;
  int32_t num_heads = 0;
  int32_t intermediate_size = 0;
  bool moe = false;
  int32_t num_experts = 0;
  int32_t top_k = 0;
  int32_t moe_intermediate_size = 0;
  float rms_eps = 1e-6f;
  float final_softcap = 0.0f;  // 0 = none
  float attn_softcap = 0.0f;   // 0 = none
  int64_t max_position = 0;
  std::vector<LayerGeometry> layers;

  // Throws std::invalid_argument naming the key ("config.json: key
  // text_config.hidden_size is missing").
  static Config parse(const std::string& config_json);
};

// 100 when config.json describes a Gemma-4 model, else 0.  Never throws for
// malformed JSON (scores 0).
int32_t probe_score(const std::string& config_json);

}  // namespace seatrt::gemma4
