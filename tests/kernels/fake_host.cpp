#include "fake_host.hpp"

#include <cstdio>

struct seatrt_status {
  seatrt_status_code code;
  std::string message;
};

namespace seatrt::test {
namespace {

seatrt_status* create(seatrt_status_code code, const char* message) {
  return new seatrt_status{code, message ? message : ""};
}
void release(seatrt_status* s) { delete s; }
seatrt_status_code code_of(const seatrt_status* s) { return s ? s->code : SEATRT_OK; }
const char* message_of(const seatrt_status* s) { return s ? s->message.c_str() : ""; }
void log(seatrt_log_level level, const char* plugin, const char* message) {
  if (level >= SEATRT_LOG_WARN) std::fprintf(stderr, "[%s] %s\n", plugin, message);
}

}  // namespace

const seatrt_host_api* fake_host() {
  static const seatrt_host_api host = {sizeof(seatrt_host_api), SEATRT_ABI_MAJOR, SEATRT_ABI_MINOR, 0,
                                       create, release, code_of, message_of, log};
  return &host;
}

seatrt_status_code take_status(seatrt_status* status, std::string* message) {
  const seatrt_status_code code = code_of(status);
  if (message) *message = message_of(status);
  release(status);
  return code;
}

}  // namespace seatrt::test
