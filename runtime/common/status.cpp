// Status <-> exception bridge for host code.
#include <string>

#include "seatrt/host/status.hpp"

namespace seatrt::host {

void throw_if_error(seatrt_status* status, const std::string& context) {
  if (status == nullptr) return;
  const seatrt_host_api* api = host_api();
  const seatrt_status_code code = api->status_code(status);
  std::string message = api->status_message(status);
  api->status_free(status);
  if (message.empty()) message = status_code_name(code);
  throw Error(code, context.empty() ? message : context + ": " + message);
}

std::string take_status_message(seatrt_status* status) {
  if (status == nullptr) return "";
  const seatrt_host_api* api = host_api();
  std::string message = api->status_message(status);
  if (message.empty()) message = status_code_name(api->status_code(status));
  api->status_free(status);
  return message;
}

const char* status_code_name(seatrt_status_code code) {
  switch (code) {
    case SEATRT_OK: return "ok";
    case SEATRT_ERR_UNKNOWN: return "unknown error";
    case SEATRT_ERR_INTERNAL: return "internal error";
    case SEATRT_ERR_NOT_FOUND: return "not found";
    case SEATRT_ERR_INVALID_ARG: return "invalid argument";
    case SEATRT_ERR_UNSUPPORTED: return "unsupported";
    case SEATRT_ERR_UNAVAILABLE: return "unavailable";
    case SEATRT_ERR_OUT_OF_MEMORY: return "out of memory";
    case SEATRT_ERR_CANCELLED: return "cancelled";
    case SEATRT_ERR_NON_FINITE: return "non-finite value";
  }
  return "unknown error";
}

}  // namespace seatrt::host
