#include "http_server.hpp"

#include <poll.h>
#include <cerrno>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "access_log.hpp"
#include "seatrt/host/logging.hpp"

namespace seatrt::server {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

// One process-wide io_context: sockets need one to exist, and all I/O here
// is synchronous, so it never runs.
net::io_context& io() {
  static net::io_context ctx;
  return ctx;
}

// The body of an error the transport answers itself (the API's error shape).
std::string transport_error(const std::string& message) {
  return "{\"error\":{\"message\":\"" + message + "\",\"type\":\"invalid_request_error\",\"code\":null}}";
}

class BeastWriter : public ResponseWriter {
 public:
  // head: the request was HEAD, so responses carry headers only (their
  // Content-Length is the body's a GET would get).
  BeastWriter(tcp::socket& socket, bool keep_alive, unsigned version, bool head = false)
      : socket_(socket), keep_alive_(keep_alive), version_(version), head_(head) {}

  void send(int status, const std::string& content_type, const std::string& body, const Headers& headers) override {
    http::response<http::string_body> res{static_cast<http::status>(status), version_};
    res.set(http::field::server, "seatrt");
    res.set(http::field::content_type, content_type);
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.body() = body;
    res.prepare_payload();
    boost::beast::error_code ec;
    if (head_) {
      http::response_serializer<http::string_body> sr{res};
      http::write_header(socket_, sr, ec);
    } else {
      http::write(socket_, res, ec);
    }
    if (ec) failed_ = true;
  }

  bool start_events() override {
    http::response<http::empty_body> res{http::status::ok, version_};
    res.set(http::field::server, "seatrt");
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    res.keep_alive(keep_alive_);
    res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    boost::beast::error_code ec;
    http::write_header(socket_, sr, ec);
    if (ec) failed_ = true;
    return !failed_;
  }

  bool write_event(const std::string& data) override {
    if (failed_) return false;
    const std::string payload = "data: " + data + "\n\n";
    boost::beast::error_code ec;
    net::write(socket_, http::make_chunk(net::buffer(payload)), ec);
    if (ec) failed_ = true;
    return !failed_;
  }

  void end_events() override {
    if (failed_) return;
    boost::beast::error_code ec;
    net::write(socket_, http::make_chunk_last(), ec);
    if (ec) failed_ = true;
  }

  bool client_gone() override {
    if (failed_) return true;
    pollfd p{socket_.native_handle(), POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    if (p.revents & POLLIN) {  // EOF reads as readable with nothing to read
      char c;
      return ::recv(socket_.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
    }
    return false;
  }

  bool failed() const { return failed_; }

 private:
  tcp::socket& socket_;
  bool keep_alive_;
  unsigned version_;
  bool head_;
  bool failed_ = false;
};

// The reading side of a connection for Beast: a read that waits
// `timeout_ms` without a byte fails with timed_out.  (Asio's blocking reads
// cannot time out: on EAGAIN from SO_RCVTIMEO they poll again, forever.)
class TimedReader {
 public:
  TimedReader(tcp::socket& socket, int timeout_ms) : socket_(socket), timeout_ms_(timeout_ms) {}

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    pollfd p{socket_.native_handle(), POLLIN, 0};
    int ready;
    do {  // a signal delivered to this thread is not the client's doing
      ready = ::poll(&p, 1, timeout_ms_);
    } while (ready < 0 && errno == EINTR);
    if (ready <= 0) {
      ec = ready == 0 ? boost::system::error_code(net::error::timed_out)
                      : boost::system::error_code(errno, boost::system::system_category());
      return 0;
    }
    return socket_.read_some(buffers, ec);
  }
  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  tcp::socket& socket_;
  int timeout_ms_;
};

// The status a request Beast could not read gets, or 0 when the client went
// away or stayed silent (nothing to answer).
int read_error_status(const boost::beast::error_code& ec) {
  if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
      ec == net::error::would_block || ec == net::error::try_again || ec == net::error::timed_out ||
      ec == net::error::operation_aborted || ec == net::error::bad_descriptor || ec == http::error::partial_message ||
      ec == http::error::short_read)
    return 0;
  if (ec == http::error::header_limit) return 431;
  if (ec == http::error::body_limit) return 413;
  if (ec.category() == make_error_code(http::error::bad_method).category()) return 400;  // every other parse error
  return 0;
}

std::string read_error_message(int status) {
  switch (status) {
    case 431: return "the request's headers exceed 8 KB";
    case 413: return "the request body exceeds 64 MB";
    default: return "the request is not valid HTTP/1.1";
  }
}

// An answer written before the handler runs (a closing one).
void answer_and_close(tcp::socket& socket, int status, const std::string& message) {
  BeastWriter writer(socket, /*keep_alive=*/false, 11);
  writer.send(status, "application/json", transport_error(message), {});
}

}  // namespace

HttpServer::HttpServer(const std::string& host, int port, Handler handler, Limits limits)
    : handler_(std::move(handler)), limits_(limits) {
  boost::system::error_code ec;
  const auto address = net::ip::make_address(host, ec);
  if (ec) throw std::runtime_error("server.host '" + host + "' is not an IP address");
  auto acceptor = std::make_unique<tcp::acceptor>(io());
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  port_ = acceptor->local_endpoint().port();
  listen_fd_ = acceptor->release();
}

HttpServer::~HttpServer() {
  stop_accepting();
  wait_connections(5.0);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void HttpServer::run() {
  tcp::acceptor acceptor(io(), tcp::v4(), listen_fd_);
  while (!stopping_) {
    tcp::socket socket(io());
    boost::system::error_code ec;
    acceptor.accept(socket, ec);
    if (ec) {
      if (stopping_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    bool full = false;
    {
      std::lock_guard lock(mutex_);
      full = static_cast<int64_t>(open_fds_.size()) >= limits_.max_connections;
    }
    if (full) {
      // Answered here, on the accepting thread, without reading the request:
      // the client learns why instead of hanging, and open ones go on.
      if (!full_logged_.exchange(true))
        host::logger()->warn("{} connections are open (server.max_connections): new ones get 503 until some close",
                             limits_.max_connections);
      answer_and_close(socket, 503, "the server has too many open connections; retry later");
      socket.shutdown(tcp::socket::shutdown_both, ec);
      socket.close(ec);
      continue;
    }
    full_logged_ = false;
    const int fd = socket.release(ec);
    if (ec) continue;
    {
      std::lock_guard lock(mutex_);
      open_fds_.insert(fd);
    }
    std::thread([this, fd] { serve_connection(fd); }).detach();
  }
  acceptor.release();
}

void HttpServer::serve_connection(int fd) {
  {
    tcp::socket socket(io());
    boost::system::error_code ec;
    socket.assign(tcp::v4(), fd, ec);
    boost::beast::flat_buffer buffer;
    std::string remote = "-";
    if (const auto peer = socket.remote_endpoint(ec); !ec)
      remote = peer.address().to_string() + ":" + std::to_string(peer.port());
    ec = {};
    const double timeout_ms = limits_.idle_timeout_s * 1000.0;
    TimedReader reader(socket, timeout_ms >= 2e9 ? -1 : static_cast<int>(timeout_ms < 1.0 ? 1.0 : timeout_ms));
    while (!ec) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(64u << 20);
      http::read_header(reader, buffer, parser, ec);
      // A client that waits for "100 Continue" before its body (curl does
      // above 1 MB) gets it at once, not after its own timeout.
      if (!ec && !parser.is_done() && boost::beast::iequals(parser.get()[http::field::expect], "100-continue")) {
        http::response<http::empty_body> cont{http::status::continue_, parser.get().version()};
        http::write(socket, cont, ec);
      }
      if (!ec && !parser.is_done()) http::read(reader, buffer, parser, ec);
      if (ec) {
        if (const int status = read_error_status(ec)) {
          answer_and_close(socket, status, read_error_message(status));
          // The access log has a line for these too (no method or path
          // could be read).
          HttpRequest unreadable;
          unreadable.method = "-";
          unreadable.path = "-";
          unreadable.remote = remote;
          log_access(unreadable, "transport", status, 0.0, GenerationRecord{}, read_error_message(status));
        }
        break;
      }
      auto& req = parser.get();
      const bool keep_alive = req.keep_alive() && !stopping_;
      BeastWriter writer(socket, keep_alive, req.version(), req.method() == http::verb::head);
      {
        std::lock_guard lock(mutex_);
        busy_fds_.insert(fd);
      }
      HttpRequest request;
      request.method = std::string(req.method_string());
      const std::string target(req.target());
      request.path = target.substr(0, target.find('?'));
      request.authorization = std::string(req[http::field::authorization]);
      request.body = std::move(req.body());
      request.remote = remote;
      handler_(request, writer);
      {
        std::lock_guard lock(mutex_);
        busy_fds_.erase(fd);
      }
      if (!keep_alive || writer.failed()) break;
    }
    {
      // Forget the fd before closing it, so no one shuts down a reused number.
      std::lock_guard lock(mutex_);
      open_fds_.erase(fd);
    }
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }
  idle_.notify_all();
}

void HttpServer::stop_accepting() {
  if (stopping_.exchange(true)) return;
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  std::lock_guard lock(mutex_);
  for (int fd : open_fds_)
    if (!busy_fds_.count(fd)) ::shutdown(fd, SHUT_RDWR);
}

bool HttpServer::wait_connections(double timeout_s) {
  std::unique_lock lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  while (!open_fds_.empty()) {
    // Connections that went idle after stop_accepting() are closed here too.
    for (int fd : open_fds_)
      if (!busy_fds_.count(fd)) ::shutdown(fd, SHUT_RDWR);
    if (idle_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(50))) ==
            std::cv_status::timeout &&
        std::chrono::steady_clock::now() >= deadline)
      break;
  }
  if (open_fds_.empty()) return true;
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  idle_.wait_for(lock, std::chrono::seconds(2), [&] { return open_fds_.empty(); });
  return false;
}

}  // namespace seatrt::server
