// Turning seatrt_status objects from plugins into exceptions on the host
// side (and back, at the C callbacks the host gives plugins).
#pragma once

#include <stdexcept>
#include <string>

#include "seatrt/abi.h"

namespace seatrt::model {

// A failure carrying an ABI status code; what() is the full message.
class StatusError : public std::runtime_error {
 public:
  StatusError(seatrt_status_code code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  seatrt_status_code code() const { return code_; }

 private:
  seatrt_status_code code_;
};

// Frees `status` and throws StatusError("<context>: <message>") when it is
// not NULL.
inline void check_status(const seatrt_host_api* host, seatrt_status* status, const std::string& context) {
  if (!status) return;
  const auto code = host->status_code(status);
  std::string message = host->status_message(status);
  host->status_free(status);
  throw StatusError(code, context.empty() ? message : context + ": " + message);
}

}  // namespace seatrt::model
