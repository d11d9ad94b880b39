// The seatrt_host_api table every plugin receives.  Status objects are
// plain heap objects of this file's struct; both sides create and free them
// only through the table, so they agree on the allocator.
#include <cstring>
#include <new>
#include <string>

#include "seatrt/host/logging.hpp"
#include "seatrt/host/status.hpp"

struct seatrt_status {
  seatrt_status_code code;
  std::string message;
};

namespace seatrt::host {
namespace {

// Must never return NULL (abi.h); if even the small allocation fails, hand
// out a static out-of-memory status that status_free recognises.
seatrt_status g_out_of_memory{SEATRT_ERR_OUT_OF_MEMORY, {}};

seatrt_status* status_create(seatrt_status_code code, const char* message) {
  try {
    return new seatrt_status{code, message ? message : ""};
  } catch (...) {
    return &g_out_of_memory;
  }
}

void status_free(seatrt_status* status) {
  if (status != &g_out_of_memory) delete status;
}

seatrt_status_code status_code(const seatrt_status* status) {
  return status ? status->code : SEATRT_OK;
}

const char* status_message(const seatrt_status* status) {
  if (status == &g_out_of_memory) return "out of memory";
  return status ? status->message.c_str() : "";
}

void log(seatrt_log_level level, const char* plugin, const char* message) {
  try {
    const char* who = plugin ? plugin : "plugin";
    const char* what = message ? message : "";
    auto lg = logger();
    switch (level) {
      case SEATRT_LOG_DEBUG: lg->debug("[{}] {}", who, what); break;
      case SEATRT_LOG_INFO: lg->info("[{}] {}", who, what); break;
      case SEATRT_LOG_WARN: lg->warn("[{}] {}", who, what); break;
      default: lg->error("[{}] {}", who, what); break;
    }
  } catch (...) {
    // Logging must never throw into a plugin; a lost line is the lesser harm.
  }
}

const seatrt_host_api kHostApi = {
    sizeof(seatrt_host_api), SEATRT_ABI_MAJOR, SEATRT_ABI_MINOR, 0,
    status_create, status_free, status_code, status_message, log,
};

}  // namespace

const seatrt_host_api* host_api() { return &kHostApi; }

}  // namespace seatrt::host
