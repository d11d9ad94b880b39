// The HTTP/1.1 transport on Boost.Beast: one thread per connection
// (blocking reads and writes, keep-alive), Server-Sent Events through
// chunked transfer encoding, and a graceful drain: stop accepting, let
// requests in flight finish (bounded), close idle connections.  Limits: at
// most max_connections open connections (one more is answered 503 and
// closed); a read that waits idle_timeout_s for a request's bytes, a
// request that arrives slower than its clock allows (timed_socket.hpp), or
// a write the client leaves unread for idle_timeout_s closes the
// connection; a request Beast cannot read whole gets its status (431
// headers too large, 413 body too large, 400 malformed or an HTTP/1.1
// request without Host) before the close.  HTTP/1.0 clients get event
// streams unframed, ended by the close.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "http_types.hpp"

namespace seatrt::server {

class HttpServer {
 public:
  using Handler = std::function<void(const HttpRequest&, ResponseWriter&)>;
  struct Limits {
    int64_t max_connections = 1024;
    double idle_timeout_s = 60.0;
  };

  // Binds host:port (throws std::runtime_error naming the address on failure).
  HttpServer(const std::string& host, int port, Handler handler, Limits limits);
  HttpServer(const std::string& host, int port, Handler handler) : HttpServer(host, port, std::move(handler), Limits{}) {}
  ~HttpServer();

  int port() const { return port_; }
  // Sets the handler (before run(); a server bound early gets it once the
  // seat has loaded).
  void set_handler(Handler handler) { handler_ = std::move(handler); }
  // Accepts connections until shutdown() is called; returns then.
  void run();
  // Stops accepting; closes idle keep-alive connections.  Requests in
  // flight continue until their handlers return.  Safe from any thread.
  void stop_accepting();
  // Waits until every connection thread has ended or `timeout_s` passed;
  // then forcibly closes what is left.  Returns true if all ended in time.
  bool wait_connections(double timeout_s);
  bool accepting() const { return !stopping_; }

 private:
  void serve_connection(int fd);

  Handler handler_;
  Limits limits_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> full_logged_{false};  // the max_connections warning, once per episode
  std::mutex mutex_;
  std::condition_variable idle_;
  std::set<int> open_fds_;    // every connection's socket
  std::set<int> busy_fds_;    // connections inside a handler
};

}  // namespace seatrt::server
