#include "serve.hpp"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <spdlog/fmt/ranges.h>

#include "seatrt/host/logging.hpp"

#include "api.hpp"
#include "http_server.hpp"

namespace seatrt::server {

namespace {
sigset_t termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR2);  // internal: wakes the signal thread at exit
  return set;
}
}  // namespace

void block_termination_signals() {
  sigset_t set = termination_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

std::unique_ptr<HttpServer> listen_for(const host::SeatConfig& seat) {
  const auto& s = seat.server;
  return std::make_unique<HttpServer>(s.host, s.port, HttpServer::Handler{},
                                      HttpServer::Limits{s.max_connections, s.idle_timeout_s});
}

int serve(SeatRuntime& seat, HttpServer& http) {
  block_termination_signals();
  Api api(seat);
  http.set_handler([&api](const HttpRequest& r, ResponseWriter& w) { api.handle(r, w); });
  host::logger()->info("listening on http://{}:{} (served names: {})", seat.host, http.port(),
               fmt::join(seat.served_names, ", "));
  std::fflush(stdout);

  std::thread signals([&] {
    sigset_t set = termination_signals();
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGUSR2) return;
    host::logger()->info("received {}: draining (no new requests; in-flight ones get up to {} s)",
                 sig == SIGTERM ? "SIGTERM" : "SIGINT", seat.drain_timeout_s);
    api.begin_drain();
    seat.engine->stop_accepting();
    http.stop_accepting();
  });

  const std::string canary = api.run_canary();
  if (canary.empty()) {
    host::logger()->info("canary generation succeeded: the seat is ready");
  } else {
    host::logger()->error("{}; /ready reports not ready", canary);
  }

  http.run();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seat.drain_timeout_s);
  while (api.in_flight() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (api.in_flight() > 0) {
    // Time is up: what still runs ends with a 503 its client can read (an
    // error event in a stream), not a cut connection; a moment for that.
    host::logger()->warn("drain timeout reached with {} request(s) in flight: they end with 503", api.in_flight());
    api.expire_drain();
    const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (api.in_flight() > 0 && std::chrono::steady_clock::now() < grace)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
  const bool clean = http.wait_connections(std::max(left, 0.1));
  if (!clean) host::logger()->warn("drain timeout reached: closed the connections still open");
  pthread_kill(signals.native_handle(), SIGUSR2);
  signals.join();
  host::logger()->info("drained; exiting");
  return 0;
}

}  // namespace seatrt::server
