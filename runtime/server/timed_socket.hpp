// A connection's socket for Beast's synchronous reads and writes, with the
// time limits a thread-per-connection server needs (Asio's blocking calls
// cannot time out: on EAGAIN from SO_RCVTIMEO/SO_SNDTIMEO they poll again,
// forever):
// - a read that waits `idle_ms` without a byte fails with timed_out;
// - a request must keep arriving: from its first byte it has a grace of
//   kGraceS seconds (or the idle limit, if shorter) plus one second per
//   kMinRate bytes read (Apache mod_reqtimeout's rule), so a client trickling
//   a byte at a time (slowloris) is dropped instead of holding its
//   connection slot for ever;
// - a write that waits `idle_ms` for the client to make room (it stopped
//   reading) fails with timed_out.
#pragma once

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstddef>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/system_error.hpp>

namespace seatrt::server {

class TimedSocket {
 public:
  static constexpr double kGraceS = 20.0;
  static constexpr double kMinRate = 500.0;  // bytes per second, after the grace

  // idle_ms < 0: no idle limit.
  TimedSocket(boost::asio::ip::tcp::socket& socket, int idle_ms)
      : socket_(socket), idle_ms_(idle_ms), grace_s_(idle_ms >= 0 && idle_ms < kGraceS * 1000 ? idle_ms / 1000.0 : kGraceS) {}

  boost::asio::ip::tcp::socket& socket() { return socket_; }

  // A new request begins; `started`: some of its bytes were already read
  // (pipelined behind the last one), so its clock runs from now.
  void begin_request(bool started) {
    armed_ = started;
    bytes_ = 0;
    if (started) start_ = Clock::now();
  }

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    if (!wait(POLLIN, ec)) return 0;
    const std::size_t n = socket_.read_some(buffers, ec);
    if (n > 0 && !armed_) {
      armed_ = true;
      start_ = Clock::now();
    }
    bytes_ += n;
    return n;
  }
  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
    if (!wait(POLLOUT, ec, /*request_clock=*/false)) return 0;
    return socket_.write_some(buffers, ec);
  }
  template <class ConstBufferSequence>
  std::size_t write_some(const ConstBufferSequence& buffers) {
    boost::system::error_code ec;
    const std::size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  using Clock = std::chrono::steady_clock;

  // Waits for `events`; false (ec set) on a time limit or a poll error.
  bool wait(short events, boost::system::error_code& ec, bool request_clock = true) {
    int timeout = idle_ms_;
    if (request_clock && armed_) {
      const double allowed_s = grace_s_ + static_cast<double>(bytes_) / kMinRate;
      const double left_ms = (allowed_s - std::chrono::duration<double>(Clock::now() - start_).count()) * 1000.0;
      if (left_ms <= 0) {
        ec = boost::asio::error::timed_out;
        return false;
      }
      if (timeout < 0 || left_ms < timeout) timeout = static_cast<int>(left_ms) + 1;
    }
    pollfd p{socket_.native_handle(), events, 0};
    int ready;
    do {  // a signal delivered to this thread is not the client's doing
      ready = ::poll(&p, 1, timeout);
    } while (ready < 0 && errno == EINTR);
    if (ready > 0) return true;
    ec = ready == 0 ? boost::system::error_code(boost::asio::error::timed_out)
                    : boost::system::error_code(errno, boost::system::system_category());
    return false;
  }

  boost::asio::ip::tcp::socket& socket_;
  int idle_ms_;
  double grace_s_;
  bool armed_ = false;
  std::size_t bytes_ = 0;
  Clock::time_point start_{};
};

}  // namespace seatrt::server
