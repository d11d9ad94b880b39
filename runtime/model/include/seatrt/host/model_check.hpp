// The model step of `seatrt check` (the hook cmd_check.cpp looks for):
// opens the seat's checkpoint, chooses the quantization and architecture
// plugins, and runs the architecture's inspect() guard, printing its
// findings.  Throws (one line) when the checkpoint may not be loaded, e.g. a
// MoE whose router is quantized.
#pragma once

#include <ostream>

#include "seatrt/host/seat_config.hpp"
#include "seatrt/host/seat_plugins.hpp"

namespace seatrt::host {

void check_model(const SeatConfig& seat, SeatPlugins& plugins, std::ostream& out);

}  // namespace seatrt::host
