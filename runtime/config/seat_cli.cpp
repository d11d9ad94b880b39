// See seat_cli.hpp.
#include "seatrt/host/seat_cli.hpp"

#include "seatrt/host/logging.hpp"

namespace seatrt::host {

SeatOptions parse_seat_options(const std::string& command, std::span<const std::string> args) {
  SeatOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= args.size()) throw UsageError(std::string(flag) + " needs a value");
      return args[++i];
    };
    if (a == "--log-format") options.log_format = value("--log-format");
    else if (a == "--log-level") options.log_level = value("--log-level");
    else if (a.rfind("--log-format=", 0) == 0) options.log_format = a.substr(13);
    else if (a.rfind("--log-level=", 0) == 0) options.log_level = a.substr(12);
    else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
    else if (options.seat_file.empty()) options.seat_file = a;
    else throw UsageError("one seat file only (got '" + options.seat_file + "' and '" + a + "')");
  }
  if (options.seat_file.empty()) throw UsageError(command + " needs a seat file");
  return options;
}

SeatConfig load_seat_with_logging(const SeatOptions& options) {
  // Flags first, so that a bad flag is reported even when the file is bad.
  if (options.log_format || options.log_level)
    configure_logging(parse_log_format(options.log_format.value_or("text")),
                      options.log_level.value_or("info"));
  SeatConfig seat = load_seat(options.seat_file);
  configure_logging(parse_log_format(options.log_format.value_or(seat.logging.format)),
                    options.log_level.value_or(seat.logging.level));
  return seat;
}

}  // namespace seatrt::host
