#include "http_client.hpp"

#include <limits>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace seatrt::server {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

HttpClient::HttpClient(const std::string& base_url, std::string api_key) : api_key_(std::move(api_key)) {
  std::string rest = base_url;
  if (rest.rfind("http://", 0) != 0)
    throw std::invalid_argument("URL '" + base_url + "' must start with http://");
  rest = rest.substr(7);
  const auto slash = rest.find('/');
  if (slash != std::string::npos) rest = rest.substr(0, slash);
  const auto colon = rest.rfind(':');
  host_ = colon == std::string::npos ? rest : rest.substr(0, colon);
  port_ = colon == std::string::npos ? "80" : rest.substr(colon + 1);
  if (host_.empty()) throw std::invalid_argument("URL '" + base_url + "' has no host");
}

namespace {

struct Connection {
  net::io_context io;
  boost::beast::tcp_stream stream{io};
  Connection(const std::string& host, const std::string& port) {
    tcp::resolver resolver(io);
    stream.connect(resolver.resolve(host, port));
  }
};

http::request<http::string_body> make_request(http::verb verb, const std::string& host, const std::string& path,
                                              const std::string& key, const std::string& body) {
  http::request<http::string_body> req{verb, path, 11};
  req.set(http::field::host, host);
  req.set(http::field::user_agent, "seatrt");
  if (!key.empty()) req.set(http::field::authorization, "Bearer " + key);
  if (verb == http::verb::post) {
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
  }
  return req;
}

HttpResponse exchange(const HttpClient& c, http::verb verb, const std::string& path, const std::string& key,
                      const std::string& body) {
  Connection conn(c.host(), c.port());
  http::write(conn.stream, make_request(verb, c.host(), path, key, body));
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(conn.stream, buffer, res);
  boost::beast::error_code ec;
  conn.stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return {static_cast<int>(res.result_int()), res.body()};
}

}  // namespace

HttpResponse HttpClient::get(const std::string& path) const { return exchange(*this, http::verb::get, path, api_key_, ""); }

HttpResponse HttpClient::post(const std::string& path, const std::string& json_body) const {
  return exchange(*this, http::verb::post, path, api_key_, json_body);
}

int HttpClient::post_events(const std::string& path, const std::string& json_body,
                            const std::function<bool(const std::string&)>& on_event, std::string* error_body) const {
  Connection conn(host_, port_);
  http::write(conn.stream, make_request(http::verb::post, host_, path, api_key_, json_body));
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  http::read_header(conn.stream, buffer, parser);
  const int status = static_cast<int>(parser.get().result_int());
  size_t consumed = 0;
  std::string line_buffer;
  boost::beast::error_code ec;
  while (!parser.is_done()) {
    http::read_some(conn.stream, buffer, parser, ec);
    if (ec) break;
    std::string& body = parser.get().body();
    if (status != 200) continue;
    // Hand over every complete line received so far.
    size_t nl;
    while ((nl = body.find('\n', consumed)) != std::string::npos) {
      std::string line = body.substr(consumed, nl - consumed);
      consumed = nl + 1;
      if (line.rfind("data: ", 0) == 0 && !on_event(line.substr(6))) {
        conn.stream.socket().shutdown(tcp::socket::shutdown_both, ec);
        return status;
      }
    }
  }
  if (status != 200 && error_body) *error_body = parser.get().body();
  conn.stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return status;
}

}  // namespace seatrt::server
