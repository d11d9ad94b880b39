#include "access_log.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "seatrt/host/logging.hpp"

namespace seatrt::server {

std::string access_line(const HttpRequest& request, int status, double ms, const GenerationRecord& generation,
                        const std::string& error) {
  char timing[64];
  std::snprintf(timing, sizeof timing, " %d %.1f ms", status, ms);
  // The method and path come from the client: JSON-quoted, so a crafted
  // path cannot forge a line or a field.
  const auto quoted = [](const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
  };
  std::string line =
      (request.remote.empty() ? std::string("-") : request.remote) + " " + quoted(request.method + " " + request.path) +
      timing;
  if (!generation.id.empty()) {
    line += " id=" + generation.id + " prompt_tokens=" + std::to_string(generation.prompt_tokens) +
            " cached_tokens=" + std::to_string(generation.cached_tokens) +
            " completion_tokens=" + std::to_string(generation.completion_tokens) + " finish=";
    if (generation.finish.empty()) line += "-";
    for (size_t i = 0; i < generation.finish.size(); ++i) line += (i ? "," : "") + generation.finish[i];
    line += generation.stream ? " stream=true" : " stream=false";
  }
  if (!error.empty()) {
    const std::string cut = error.size() > 300 ? error.substr(0, 300) + "..." : error;
    line += " error=" + quoted(cut);
  }
  return line;
}

void log_access(const HttpRequest& request, const std::string& endpoint, int status, double ms,
                const GenerationRecord& generation, const std::string& error) {
  const std::string line = access_line(request, status, ms, generation, error);
  auto log = host::logger();
  if (endpoint == "health" || endpoint == "ready" || endpoint == "metrics") log->debug("{}", line);
  else if (status >= 500) log->warn("{}", line);
  else log->info("{}", line);
}

}  // namespace seatrt::server
