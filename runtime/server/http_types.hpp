// The seam between the HTTP transport (http_server.cpp, Boost.Beast) and
// the API handlers (api.cpp): a parsed request and a way to answer it,
// either whole or as a Server-Sent Events stream.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace seatrt::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string
  std::string authorization;
  std::string body;
  std::string remote;  // the peer's "address:port", for the access log
};

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  using Headers = std::vector<std::pair<std::string, std::string>>;
  // A complete response.
  virtual void send(int status, const std::string& content_type, const std::string& body,
                    const Headers& headers = {}) = 0;
  // text/event-stream response: header first, then events.  write_event
  // returns false when the client is gone.
  virtual bool start_events() = 0;
  virtual bool write_event(const std::string& data) = 0;
  // An event with its SSE event name ("event: <name>" before its data), as
  // the Responses API streams.
  virtual bool write_named_event(const std::string& name, const std::string& data) = 0;
  virtual void end_events() = 0;
  // True when the peer closed the connection (checked without blocking).
  virtual bool client_gone() = 0;
};

}  // namespace seatrt::server
