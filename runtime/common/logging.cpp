// The process logger.  Text lines use spdlog's pattern; JSON lines use a
// formatter of our own, because a pattern cannot escape the message (a
// quote or newline in a message would break the line for a log collector).
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>
#include <spdlog/formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "seatrt/host/logging.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::host {
namespace {

constexpr const char* kTextPattern = "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v";

class JsonLineFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    using namespace std::chrono;
    const auto since_epoch = msg.time.time_since_epoch();
    const auto seconds_part = duration_cast<seconds>(since_epoch);
    const auto millis = duration_cast<milliseconds>(since_epoch - seconds_part).count();
    const std::time_t t = static_cast<std::time_t>(seconds_part.count());
    std::tm utc{};
    gmtime_r(&t, &utc);
    char stamp[96];  // generous: the compiler cannot bound tm_year
    std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<int>(millis));
    const nlohmann::json line = {
        {"time", stamp},
        {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                              spdlog::level::to_string_view(msg.level).size())},
        {"msg", std::string(msg.payload.data(), msg.payload.size())},
    };
    // Replace invalid UTF-8 rather than throw: a log line must not fail.
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonLineFormatter>();
  }
};

std::mutex g_mutex;
std::atomic<LogFormat> g_format{LogFormat::text};
std::shared_ptr<spdlog::logger> g_logger;

std::shared_ptr<spdlog::logger> make_logger() {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto lg = std::make_shared<spdlog::logger>("seatrt", sink);
  lg->set_pattern(kTextPattern);
  lg->set_level(spdlog::level::info);
  return lg;
}

}  // namespace

LogFormat parse_log_format(std::string_view name) {
  if (name == "text") return LogFormat::text;
  if (name == "json") return LogFormat::json;
  throw Error(SEATRT_ERR_INVALID_ARG,
              "unknown log format '" + std::string(name) + "' (expected \"text\" or \"json\")");
}

void configure_logging(LogFormat format, std::string_view level) {
  spdlog::level::level_enum parsed;
  if (level == "debug") parsed = spdlog::level::debug;
  else if (level == "info") parsed = spdlog::level::info;
  else if (level == "warn") parsed = spdlog::level::warn;
  else if (level == "error") parsed = spdlog::level::err;
  else if (level == "off") parsed = spdlog::level::off;
  else
    throw Error(SEATRT_ERR_INVALID_ARG, "unknown log level '" + std::string(level) +
                                            "' (expected debug, info, warn, error or off)");
  auto lg = logger();
  g_format = format;
  if (format == LogFormat::json) lg->set_formatter(std::make_unique<JsonLineFormatter>());
  else lg->set_pattern(kTextPattern);
  lg->set_level(parsed);
}

LogFormat log_format() { return g_format; }

std::shared_ptr<spdlog::logger> logger() {
  std::lock_guard lock(g_mutex);
  if (!g_logger) g_logger = make_logger();
  return g_logger;
}

}  // namespace seatrt::host
