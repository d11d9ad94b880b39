// What a Gemma-4 checkpoint must contain, and inspect(): the
// architecture-class guard (a MoE whose router is quantized is refused,
// naming the modules and the fix) plus missing / extra / misshapen tensors,
// checked before any weight is loaded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gemma4_config.hpp"
#include "seatrt/model.h"

namespace seatrt::gemma4 {

struct LinearSpec {
  std::string module;  // name without ".weight"
  int64_t out_features = 0;
  int64_t in_features = 0;
  bool router = false;
  bool expert = false;
};

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
};

std::vector<LinearSpec> expected_linears(const Config& c);
std::vector<TensorSpec> expected_plain_tensors(const Config& c);

// Runs every check; each finding goes to `report` as "key: value".  Throws
// sdk::Error(INVALID_ARG) naming the problem when the model may not load.
void inspect_checkpoint(const Config& c, const seatrt_model_source* src,
                        const std::function<void(const std::string&)>& report);

}  // namespace seatrt::gemma4
