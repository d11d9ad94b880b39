#include "http_server.hpp"

#include <poll.h>
#include <cerrno>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <string_view>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "access_log.hpp"
#include "api_error.hpp"
#include "json_text.hpp"
#include "seatrt/host/logging.hpp"
#include "timed_socket.hpp"

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
std::string transport_error(int status, const std::string& message) {
  const char* type = status == 503 ? "ServiceUnavailableError" : "BadRequestError";
  return json_text(ApiError(status, type, message).to_json());
}

// The current time as HTTP writes it (RFC 9110 5.6.7, IMF-fixdate).
std::string http_date() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  static const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char out[40];
  std::snprintf(out, sizeof out, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[utc.tm_wday], utc.tm_mday,
                kMonths[utc.tm_mon], utc.tm_year + 1900, utc.tm_hour, utc.tm_min, utc.tm_sec);
  return out;
}

class BeastWriter : public ResponseWriter {
 public:
  // head: the request was HEAD, so responses carry headers only (their
  // Content-Length is the body's a GET would get).  An HTTP/1.0 client
  // gets its event stream unframed, ended by the close (RFC 9112 6.1: no
  // Transfer-Encoding unless the request is HTTP/1.1).
  BeastWriter(TimedSocket& stream, bool keep_alive, unsigned version, bool head = false)
      : stream_(stream), keep_alive_(keep_alive), version_(version), head_(head) {}

  void send(int status, const std::string& content_type, const std::string& body, const Headers& headers) override {
    http::response<http::string_body> res{static_cast<http::status>(status), version_};
    res.set(http::field::server, "seatrt");
    res.set(http::field::date, http_date());
    res.set(http::field::content_type, content_type);
    for (const auto& [k, v] : headers) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.body() = body;
    res.prepare_payload();
    boost::beast::error_code ec;
    if (head_) {
      http::response_serializer<http::string_body> sr{res};
      http::write_header(stream_, sr, ec);
    } else {
      http::write(stream_, res, ec);
    }
    if (ec) failed_ = true;
  }

  bool start_events() override {
    http::response<http::empty_body> res{http::status::ok, version_};
    res.set(http::field::server, "seatrt");
    res.set(http::field::date, http_date());
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    if (version_ < 11) keep_alive_ = false;  // the close ends the stream
    res.keep_alive(keep_alive_);
    if (version_ >= 11) res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    boost::beast::error_code ec;
    http::write_header(stream_, sr, ec);
    if (ec) failed_ = true;
    return !failed_;
  }

  bool write_event(const std::string& data) override { return write_payload("data: " + data + "\n\n"); }

  bool write_named_event(const std::string& name, const std::string& data) override {
    return write_payload("event: " + name + "\ndata: " + data + "\n\n");
  }

  bool write_payload(const std::string& payload) {
    if (failed_) return false;
    boost::beast::error_code ec;
    if (version_ >= 11) net::write(stream_, http::make_chunk(net::buffer(payload)), ec);
    else net::write(stream_, net::buffer(payload), ec);
    if (ec) failed_ = true;
    return !failed_;
  }

  void end_events() override {
    if (failed_ || version_ < 11) return;
    boost::beast::error_code ec;
    net::write(stream_, http::make_chunk_last(), ec);
    if (ec) failed_ = true;
  }

  bool client_gone() override {
    if (failed_) return true;
    const int fd = stream_.socket().native_handle();
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    if (p.revents & POLLIN) {  // EOF reads as readable with nothing to read
      char c;
      return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
    }
    return false;
  }

  bool failed() const { return failed_; }
  bool keep_alive() const { return keep_alive_; }

 private:
  TimedSocket& stream_;
  bool keep_alive_;
  unsigned version_;
  bool head_;
  bool failed_ = false;
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
void answer_and_close(TimedSocket& stream, int status, const std::string& message, bool head = false) {
  BeastWriter writer(stream, /*keep_alive=*/false, 11, head);
  writer.send(status, "application/json", transport_error(status, message),
              status == 503 ? ResponseWriter::Headers{{"Retry-After", "1"}} : ResponseWriter::Headers{});
}

// What is wrong with a request's header before its body is read, as a
// status and a message (status 0: nothing).
struct HeaderProblem {
  int status = 0;
  std::string message;
};

HeaderProblem header_problem(const http::request_header<>& h) {
  // Framing (RFC 9112 6.1, 6.3): only "chunked" is decoded here, and it
  // must be the last coding, or the body's end is unknowable (a body read
  // as the next request: smuggling).
  if (const auto te = h.find(http::field::transfer_encoding); te != h.end()) {
    std::vector<std::string> codings;
    std::string current;
    for (char c : std::string(te->value().data(), te->value().size()) + ",") {
      if (c == ',') {
        if (!current.empty()) codings.push_back(current);
        current.clear();
      } else if (c != ' ' && c != '\t') {
        current += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    if (codings.empty() || codings.back() != "chunked")
      return {400, "the request's Transfer-Encoding must end in chunked"};
    for (const auto& c : codings)
      if (c != "chunked") return {501, "the request's Transfer-Encoding '" + c + "' is not supported"};
  }
  // Exactly one valid Host on HTTP/1.1 (RFC 9112 3.2).
  if (h.version() >= 11) {
    const auto hosts = h.count(http::field::host);
    if (hosts == 0) return {400, "an HTTP/1.1 request must carry a Host header"};
    if (hosts > 1) return {400, "the request carries more than one Host header"};
    const auto v = h[http::field::host];
    if (std::any_of(v.begin(), v.end(), [](char c) { return c == ' ' || c == ',' || c == '\t'; }))
      return {400, "the request's Host header is not one host"};
  }
  return {};
}

// The path of a request target: origin-form "/p?q", or absolute-form
// "http://host/p?q", which a server must accept (RFC 9112 3.2.2).
std::string target_path(std::string_view target) {
  const auto lower_prefix = [&](std::string_view scheme) {
    if (target.size() < scheme.size()) return false;
    for (size_t i = 0; i < scheme.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(target[i])) != scheme[i]) return false;
    return true;
  };
  for (std::string_view scheme : {"http://", "https://"}) {
    if (lower_prefix(scheme)) {
      const size_t slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
      break;
    }
  }
  return std::string(target.substr(0, target.find('?')));
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
      TimedSocket stream(socket, 1000);  // a client that does not read its 503 is not waited on
      answer_and_close(stream, 503, "the server has too many open connections; retry later");
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
    TimedSocket stream(socket, timeout_ms >= 2e9 ? -1 : static_cast<int>(timeout_ms < 1.0 ? 1.0 : timeout_ms));
    while (!ec) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(64u << 20);
      stream.begin_request(buffer.size() > 0);
      http::read_header(stream, buffer, parser, ec);
      // The header's own faults (framing, Host) are answered before any body.
      const HeaderProblem problem = ec ? HeaderProblem{} : header_problem(parser.get());
      // A client that waits for "100 Continue" before its body (curl does
      // above 1 MB) gets it at once, not after its own timeout; an HTTP/1.0
      // client's expectation is ignored (RFC 9110 10.1.1).
      if (!ec && !problem.status && !parser.is_done() && parser.get().version() >= 11 &&
          boost::beast::iequals(parser.get()[http::field::expect], "100-continue")) {
        http::response<http::empty_body> cont{http::status::continue_, parser.get().version()};
        http::write(stream, cont, ec);
      }
      if (!ec && !problem.status && !parser.is_done()) http::read(stream, buffer, parser, ec);
      if (ec || problem.status) {
        if (const int status = problem.status ? problem.status : read_error_status(ec)) {
          const std::string message = problem.status ? problem.message : read_error_message(status);
          // A HEAD request's answer has no body, errors included (RFC 9110 9.3.2).
          const bool head = parser.is_header_done() && parser.get().method() == http::verb::head;
          answer_and_close(stream, status, message, head);
          // The access log has a line for these too (no method or path
          // could be read).
          HttpRequest unreadable;
          unreadable.method = "-";
          unreadable.path = "-";
          unreadable.remote = remote;
          log_access(unreadable, "transport", status, 0.0, GenerationRecord{}, message);
        }
        break;
      }
      auto& req = parser.get();
      BeastWriter writer(stream, req.keep_alive() && !stopping_, req.version(), req.method() == http::verb::head);
      {
        std::lock_guard lock(mutex_);
        busy_fds_.insert(fd);
      }
      HttpRequest request;
      request.method = std::string(req.method_string());
      request.path = target_path(std::string_view(req.target().data(), req.target().size()));
      request.authorization = std::string(req[http::field::authorization]);
      request.body = std::move(req.body());
      request.remote = remote;
      handler_(request, writer);
      {
        std::lock_guard lock(mutex_);
        busy_fds_.erase(fd);
      }
      if (!writer.keep_alive() || writer.failed()) break;
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
