// What a "tinydense" checkpoint must hold, checked without loading it.
#pragma once

#include <functional>
#include <string>

#include "config.hpp"
#include "seatrt/model.h"

namespace tinydense {

// Throws seatrt::sdk::Error (INVALID_ARG) naming the first missing,
// misshapen or quantized tensor; reports a summary line per finding.
void inspect_checkpoint(const Config& c, const seatrt_model_source* src,
                        const std::function<void(const std::string&)>& report);

}  // namespace tinydense
