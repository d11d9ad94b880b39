#include "http_server.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

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

class BeastWriter : public ResponseWriter {
 public:
  BeastWriter(tcp::socket& socket, bool keep_alive, unsigned version)
      : socket_(socket), keep_alive_(keep_alive), version_(version) {}

  void send(int status, const std::string& content_type, const std::string& body, const Headers& headers) override {
    http::response<http::string_body> res{static_cast<http::status>(status), version_};
    res.set(http::field::server, "seatrt");
    res.set(http::field::content_type, content_type);
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.body() = body;
    res.prepare_payload();
    boost::beast::error_code ec;
    http::write(socket_, res, ec);
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
  bool failed_ = false;
};

}  // namespace

HttpServer::HttpServer(const std::string& host, int port, Handler handler) : handler_(std::move(handler)) {
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
    while (!ec) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(64u << 20);
      http::read(socket, buffer, parser, ec);
      if (ec) break;
      auto& req = parser.get();
      const bool keep_alive = req.keep_alive() && !stopping_;
      BeastWriter writer(socket, keep_alive, req.version());
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
