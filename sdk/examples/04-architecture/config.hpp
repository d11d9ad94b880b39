// The "tinydense" config.json: the few numbers the architecture needs.
#pragma once

#include <cstdint>
#include <string>

namespace tinydense {

struct Config {
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t intermediate_size = 0;
  int32_t num_layers = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int64_t max_position = 0;
  float rms_norm_eps = 1e-6f;
  float rope_theta = 10000.0f;

  // Reads config.json's top-level keys; throws std::invalid_argument naming
  // the key that is missing or out of range.
  static Config parse(const std::string& json);
};

// 0 unless config.json says "model_type": "tinydense".
int32_t probe_score(const std::string& json);

}  // namespace tinydense
