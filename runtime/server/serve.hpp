// Runs a seat's HTTP server until SIGTERM/SIGINT, then drains: no new
// requests (503 on open connections, new connections refused), requests in
// flight finish within drain_timeout_s, exit status 0.
#pragma once

#include <memory>

#include "http_server.hpp"
#include "seat_runtime.hpp"
#include "seatrt/host/seat_config.hpp"

namespace seatrt::server {

// Blocks SIGTERM and SIGINT in the calling thread and every thread it
// starts afterwards, so that serve() receives them with sigwait.  Call it
// first thing, before the engine starts its thread.
void block_termination_signals();

// Binds the seat's address before anything slow (the model load), so a
// port in use or a bad host is known at once; nothing is accepted until
// serve() runs.  Throws std::runtime_error naming the address.
std::unique_ptr<HttpServer> listen_for(const host::SeatConfig& seat);

// Serves on `http` (from listen_for) until a termination signal; returns
// the process exit status.
int serve(SeatRuntime& seat, HttpServer& http);

}  // namespace seatrt::server
