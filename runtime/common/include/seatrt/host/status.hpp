// The host's side of the ABI's error convention: the process-wide
// seatrt_host_api table handed to plugins, and the bridge between status
// objects (what crosses the ABI) and C++ exceptions (what the host uses
// internally).
#pragma once

#include <stdexcept>
#include <string>

#include "seatrt/abi.h"

namespace seatrt::host {

// The process's host API table (status_create/free/code/message, log through
// spdlog).  Static storage: valid for the whole life of the process, safe to
// call from any thread.
const seatrt_host_api* host_api();

// A failure inside the host, carrying the ABI status code it maps to.  The
// message is one line meant for the operator (it names the file, key or
// plugin at fault).
class Error : public std::runtime_error {
 public:
  Error(seatrt_status_code code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  seatrt_status_code code() const { return code_; }

 private:
  seatrt_status_code code_;
};

// Takes ownership of `status` (which must come from host_api()): NULL does
// nothing; otherwise frees it and throws Error with its code and message,
// prefixed by `context` + ": " when `context` is not empty.
void throw_if_error(seatrt_status* status, const std::string& context = "");

// Takes ownership of `status` and returns its message ("" for NULL), freeing
// it.  For callers that report rather than throw.
std::string take_status_message(seatrt_status* status);

// Human name of a status code ("invalid argument").
const char* status_code_name(seatrt_status_code code);

}  // namespace seatrt::host
