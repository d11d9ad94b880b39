// Example 1: a plugin that only describes itself.  It provides no kind of
// table (kinds = 0); the host can list it and initialise it, nothing more.
// Everything a real plugin adds starts from these lines.
#include "seatrt/cpp/plugin.hpp"

namespace {

// initialize() is called once, after the host checked the ABI version.  Keep
// the host table: statuses and logs go through it.  guard() turns any
// exception into a status, because none may cross the ABI.
seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] {
    seatrt::sdk::set_host(host);
    seatrt::sdk::log(SEATRT_LOG_DEBUG, "example-minimal", "initialised");
  });
}

seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(0, "example-minimal", "0.1.0",
                                          "SDK example 1: describes itself, provides nothing");
  p.initialize = initialize;
  return p;
}

// Static storage: the host reads the descriptor until it unloads the library.
const seatrt_plugin kDescriptor = make_descriptor();

}  // namespace

// The one exported symbol.
SEATRT_DEFINE_PLUGIN(kDescriptor)
