// `seatrt serve SEAT.toml`: until the server lands (issue 6) this validates
// everything serving would need, then says plainly that the HTTP server is
// not built yet and exits 3.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "command.hpp"
#include "seatrt/host/logging.hpp"
#include "seatrt/host/seat_cli.hpp"
#include "seatrt/host/seat_plugins.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::cli {
namespace {

using namespace seatrt::host;

// Exit status for "valid seat, but serving is not available in this build".
constexpr int kServerNotBuilt = 3;

int run_serve(std::span<const std::string> args) {
  try {
    const SeatOptions options = parse_seat_options("serve", args);
    const SeatConfig seat = load_seat_with_logging(options);
    if (seat.server.api_key_env && std::getenv(seat.server.api_key_env->c_str()) == nullptr)
      throw Error(SEATRT_ERR_INVALID_ARG, seat.file.string() + ": [server] api_key_env names $" +
                                              *seat.server.api_key_env +
                                              ", which is not set in the environment");
    if (!std::filesystem::is_directory(seat.model.path))
      throw Error(SEATRT_ERR_NOT_FOUND, seat.file.string() + ": [model] path '" +
                                            seat.model.path.string() + "' is not a directory");
    const SeatPlugins plugins = load_seat_plugins(seat);
    logger()->info("seat '{}' is valid: kernel provider '{}', {} plugin search path(s)",
                   seat.seat.name, plugins.kernels->name(), plugins.search_paths.size());
    std::fprintf(stderr, "seatrt serve: the HTTP server is not built yet (issue 6)\n");
    return kServerNotBuilt;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "seatrt serve: %s\nusage: seatrt serve SEAT.toml [--log-format text|json]\n",
                 e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt serve: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("serve", "serve SEAT.toml [--log-format text|json]",
                   "serve a seat as an OpenAI-compatible HTTP endpoint", seatrt::cli::run_serve)
