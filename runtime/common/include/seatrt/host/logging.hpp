// The host's logger: spdlog, human-readable lines by default or one JSON
// object per line (for log collectors).  Plugins log through the host API
// table and land here too, tagged with their name.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

namespace seatrt::host {

enum class LogFormat { text, json };

// Parses "text" / "json"; throws Error (INVALID_ARG) naming the value.
LogFormat parse_log_format(std::string_view name);

// (Re)configures the process logger: format and level ("debug", "info",
// "warn", "error", "off").  Writes to stderr.  Throws Error on an unknown
// level.  Not thread-safe with concurrent logging; call at start-up.
void configure_logging(LogFormat format, std::string_view level);

// The process logger (configured with text/info on first use).
std::shared_ptr<spdlog::logger> logger();

// The format configure_logging last set (text until then): a command's
// fatal error goes out in it, so a JSON log stays one object per line.
LogFormat log_format();

}  // namespace seatrt::host
