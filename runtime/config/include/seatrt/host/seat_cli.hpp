// What the seat-taking CLI commands (check, serve) share: their arguments
// (SEAT.toml [--log-format text|json] [--log-level L]) and loading the seat
// with the logger configured from the seat file, the flags overriding it.
#pragma once

#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "seatrt/host/seat_config.hpp"

namespace seatrt::host {

// A command line that does not parse; the command prints its usage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SeatOptions {
  std::string seat_file;
  std::optional<std::string> log_format;  // --log-format
  std::optional<std::string> log_level;   // --log-level
};

// Throws UsageError for unknown flags or a missing/extra SEAT.toml.
SeatOptions parse_seat_options(const std::string& command, std::span<const std::string> args);

// load_seat() then configure_logging() ([logging] of the seat, overridden by
// the flags).  Throws Error.
SeatConfig load_seat_with_logging(const SeatOptions& options);

}  // namespace seatrt::host
