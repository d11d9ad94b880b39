// One log line per HTTP request (the access log): who asked for what, the
// status, how long it took and, for a generation, its id, token counts and
// finish reasons -- what an operator greps when a client reports a problem.
// Probes (/health, /ready, /metrics) log at debug, server errors (5xx) at
// warn, everything else at info, so `[logging] level = "warn"` silences the
// routine lines.
#pragma once

#include <string>

#include "http_types.hpp"
#include "serve_generation.hpp"

namespace seatrt::server {

// The line, e.g.
//   127.0.0.1:51234 "POST /v1/chat/completions" 200 812.4 ms id=chatcmpl-... prompt_tokens=25
//   cached_tokens=0 completion_tokens=40 finish=stop stream=false
// `error` (may be empty) is appended JSON-quoted, cut to 300 bytes.
std::string access_line(const HttpRequest& request, int status, double ms, const GenerationRecord& generation,
                        const std::string& error);

// Logs access_line at the level the endpoint and status call for.
void log_access(const HttpRequest& request, const std::string& endpoint, int status, double ms,
                const GenerationRecord& generation, const std::string& error);

}  // namespace seatrt::server
