// Runs a seat's HTTP server until SIGTERM/SIGINT, then drains: no new
// requests (503 on open connections, new connections refused), requests in
// flight finish within drain_timeout_s, exit status 0.
#pragma once

#include "seat_runtime.hpp"

namespace seatrt::server {

// Blocks SIGTERM and SIGINT in the calling thread and every thread it
// starts afterwards, so that serve() receives them with sigwait.  Call it
// first thing, before the engine starts its thread.
void block_termination_signals();

// Serves until a termination signal; returns the process exit status.
int serve(SeatRuntime& seat);

}  // namespace seatrt::server
