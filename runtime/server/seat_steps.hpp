// `seatrt check`'s view of the model's step graphs: loads the model on the
// seat's kernel provider and prints what the architecture's describe_steps
// reports (its graphs' nodes and which provider or planner runs them).
#pragma once

#include <ostream>

#include "seatrt/host/seat_config.hpp"
#include "seatrt/host/seat_plugins.hpp"

namespace seatrt::server {

// Prints "model steps (max_seqs N):" and, per graph the architecture
// reports, its lines indented under the graph's heading.  An architecture
// without describe_steps, or a model this provider cannot load (check has
// always passed seats whose provider is only exercised by the kernel
// smoke, e.g. the SDK example), gets one line saying why; a failure of
// describe_steps itself throws Error.
void check_seat_steps(const host::SeatConfig& seat, host::SeatPlugins& plugins, std::ostream& out);

}  // namespace seatrt::server
