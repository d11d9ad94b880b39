// A small blocking HTTP/1.1 client (Boost.Beast) for `seatrt verify` and
// `seatrt bench`: JSON requests and Server-Sent Events streams.
#pragma once

#include <functional>
#include <string>

namespace seatrt::server {

struct HttpResponse {
  int status = 0;
  std::string body;
};

class HttpClient {
 public:
  // `base_url`: "http://host:port" (a trailing "/" or "/v1" is dropped).
  // Throws std::invalid_argument for anything else.
  HttpClient(const std::string& base_url, std::string api_key);

  HttpResponse get(const std::string& path) const;
  HttpResponse post(const std::string& path, const std::string& json_body) const;
  // POSTs and calls on_event with each SSE "data:" payload as it arrives;
  // on_event returns false to hang up.  Returns the HTTP status (the body
  // of a non-200 answer goes to *error_body).
  int post_events(const std::string& path, const std::string& json_body,
                  const std::function<bool(const std::string&)>& on_event, std::string* error_body = nullptr) const;

  const std::string& host() const { return host_; }
  const std::string& port() const { return port_; }

 private:
  std::string host_;
  std::string port_;
  std::string api_key_;
};

}  // namespace seatrt::server
