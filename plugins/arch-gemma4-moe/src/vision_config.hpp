// The Gemma-4 vision tower's hyper-parameters, read from config.json's
// vision_config (and text_config.hidden_size, the width embed_vision
// projects into).  Settings the tower does not implement are refused here,
// by name, rather than computed wrongly later.
#pragma once

#include <cstdint>
#include <string>

namespace seatrt::gemma4 {

struct VisionConfig {
  std::string tower_prefix = "model.vision_tower.";
  std::string embed_prefix = "model.embed_vision.";
  int32_t hidden_size = 0;
  int32_t intermediate_size = 0;
  int32_t num_layers = 0;
  int32_t num_heads = 0;
  int32_t head_dim = 0;
  int32_t patch_size = 0;
  int32_t pooling_kernel_size = 0;
  int32_t position_embedding_size = 0;
  float rms_eps = 1e-6f;
  float rope_theta = 100.0f;
  bool standardize = false;
  int32_t text_hidden_size = 0;

  int32_t patch_values() const { return 3 * patch_size * patch_size; }

  // Throws std::invalid_argument naming the key ("config.json:
  // vision_config.hidden_size is missing").
  static VisionConfig parse(const std::string& config_json);
};

}  // namespace seatrt::gemma4
