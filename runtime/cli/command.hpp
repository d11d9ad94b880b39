// The `seatrt` CLI's subcommand registry.  Each subcommand lives in its own
// runtime/cli/cmd_<name>.cpp (collected by CMake) and registers itself with
// SEATRT_CLI_COMMAND, so adding a command never edits a shared file.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace seatrt::cli {

// Runs a subcommand with the arguments that follow its name; returns the
// process exit status.  Must not throw (main() also catches, as a backstop).
using CommandFn = int (*)(std::span<const std::string> args);

struct Command {
  const char* name;     // "check"
  const char* usage;    // "check SEAT.toml"
  const char* summary;  // one line for `seatrt --help`
  CommandFn run;
};

// All registered commands, sorted by name.
const std::vector<Command>& commands();

// Called by SEATRT_CLI_COMMAND at static-initialisation time.
bool register_command(const Command& command);

}  // namespace seatrt::cli

#define SEATRT_CLI_CONCAT_INNER(a, b) a##b
#define SEATRT_CLI_CONCAT(a, b) SEATRT_CLI_CONCAT_INNER(a, b)
// SEATRT_CLI_COMMAND("name", "usage", "summary", function)
#define SEATRT_CLI_COMMAND(name, usage, summary, fn)                                   \
  namespace {                                                                          \
  [[maybe_unused]] const bool SEATRT_CLI_CONCAT(seatrt_cli_registered_, __LINE__) =    \
      ::seatrt::cli::register_command(::seatrt::cli::Command{name, usage, summary, fn}); \
  }
