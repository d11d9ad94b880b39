// seatrt plugin SDK, C++ side: header-only helpers compiled INTO a plugin
// (they are not part of the ABI).  They keep C++ exceptions on the plugin's
// side of the boundary, turn them into status objects, and define the one
// exported entry point.
//
//   static seatrt_status* my_initialize(const seatrt_host_api* host) {
//     return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
//   }
//   static const seatrt_plugin kPlugin = seatrt::sdk::describe(...);
//   SEATRT_DEFINE_PLUGIN(kPlugin)
#ifndef SEATRT_CPP_PLUGIN_HPP
#define SEATRT_CPP_PLUGIN_HPP

#include <exception>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <utility>

#include "seatrt/seatrt.h"

namespace seatrt::sdk {

// The host table this plugin was initialised with.  One per plugin library
// (symbols are hidden, so every library has its own copy).
inline const seatrt_host_api*& host_slot() {
  static const seatrt_host_api* host = nullptr;
  return host;
}
inline void set_host(const seatrt_host_api* host) { host_slot() = host; }
inline const seatrt_host_api* host() { return host_slot(); }

// An exception that carries a status code; thrown inside the plugin only.
class Error : public std::runtime_error {
 public:
  Error(seatrt_status_code code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  seatrt_status_code code() const { return code_; }

 private:
  seatrt_status_code code_;
};

// Makes a status through the host (ownership goes to whoever receives it).
// Before initialize() there is no host: returns nullptr, which callers must
// not mistake for success, so initialize() always runs first.
inline seatrt_status* make_status(seatrt_status_code code, const std::string& message) {
  const seatrt_host_api* h = host();
  return h ? h->status_create(code, message.c_str()) : nullptr;
}

// Runs `body` and converts every exception into a status.  `body` returns
// void (success) or seatrt_status* (passed through).
template <typename Body>
seatrt_status* guard(Body&& body) noexcept {
  try {
    if constexpr (std::is_same_v<decltype(body()), void>) {
      body();
      return nullptr;
    } else {
      return body();
    }
  } catch (const Error& e) {
    return make_status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return make_status(SEATRT_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return make_status(SEATRT_ERR_INTERNAL, e.what());
  } catch (...) {
    return make_status(SEATRT_ERR_INTERNAL, "unknown exception in plugin");
  }
}

// Logs through the host.
inline void log(seatrt_log_level level, const char* plugin, const std::string& message) {
  if (const seatrt_host_api* h = host()) h->log(level, plugin, message.c_str());
}

// Throws the message of a status returned by another ABI call (freeing it).
inline void throw_if_error(seatrt_status* status) {
  if (!status) return;
  const seatrt_host_api* h = host();
  Error err(h->status_code(status), h->status_message(status));
  h->status_free(status);
  throw err;
}

// A descriptor with the ABI version this plugin is compiled against.
inline constexpr seatrt_plugin describe(uint32_t kinds, const char* name, const char* version,
                                        const char* description) {
  seatrt_plugin p{};
  p.struct_size = sizeof(seatrt_plugin);
  p.abi_major = SEATRT_ABI_MAJOR;
  p.abi_minor = SEATRT_ABI_MINOR;
  p.kinds = kinds;
  p.name = name;
  p.version = version;
  p.description = description;
  return p;
}

}  // namespace seatrt::sdk

// Defines the exported entry point returning `descriptor` (a seatrt_plugin
// with static storage).  Use once per library.
#define SEATRT_DEFINE_PLUGIN(descriptor)                                                   \
  extern "C" SEATRT_PLUGIN_EXPORT const seatrt_plugin* seatrt_plugin_init(                 \
      const seatrt_host_api* /*host*/) {                                                   \
    return &(descriptor);                                                                  \
  }

#endif  // SEATRT_CPP_PLUGIN_HPP
