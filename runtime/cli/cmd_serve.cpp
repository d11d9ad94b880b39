// `seatrt serve SEAT.toml`: loads the seat (plugins, model, tokenizer, chat
// template, KV pool planned in bytes and checked against the device) and
// serves it as an OpenAI-compatible HTTP endpoint until SIGTERM/SIGINT,
// then drains and exits 0.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "command.hpp"
#include "seatrt/host/logging.hpp"
#include "seatrt/host/seat_cli.hpp"
#include "server/seat_loader.hpp"
#include "server/serve.hpp"

namespace seatrt::cli {
namespace {

int run_serve(std::span<const std::string> args) {
  try {
    const host::SeatOptions options = host::parse_seat_options("serve", args);
    const host::SeatConfig seat = host::load_seat_with_logging(options);
    // Before any thread starts, so the signals reach serve()'s sigwait.
    server::block_termination_signals();
    server::check_seat_server(seat);
    (void)server::seat_text_files(seat);  // a named chat template that is missing, before the model loads
    auto http = server::listen_for(seat);  // a port in use is known before the model loads
    auto loaded = server::LoadedSeat::load(seat);
    const int status = server::serve(loaded->runtime(), *http);
    // The engine's thread stops when `loaded` goes; a plugin hung inside a
    // step would hold that (and the exit) for ever.
    std::thread([status] {
      std::this_thread::sleep_for(std::chrono::seconds(10));
      host::logger()->error("the engine did not stop within 10 s after the drain (a plugin is hung); exiting");
      std::_Exit(status);
    }).detach();
    return status;
  } catch (const host::UsageError& e) {
    std::fprintf(stderr, "seatrt serve: %s\nusage: seatrt serve SEAT.toml [--log-format text|json]\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    // In a JSON log the fatal line is a JSON object too (log shippers).
    if (host::log_format() == host::LogFormat::json) host::logger()->critical("seatrt serve: error: {}", e.what());
    else std::fprintf(stderr, "seatrt serve: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("serve", "serve SEAT.toml [--log-format text|json]",
                   "serve a seat as an OpenAI-compatible HTTP endpoint", seatrt::cli::run_serve)
