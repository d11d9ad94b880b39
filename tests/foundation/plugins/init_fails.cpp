// A tool parser whose initialize() fails with its own message, which the
// host must show the operator.
#include "seatrt/cpp/plugin.hpp"

namespace {
seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] {
    seatrt::sdk::set_host(host);
    throw seatrt::sdk::Error(SEATRT_ERR_UNAVAILABLE,
                             "test-init-fails: the licence file /etc/nowhere.lic is missing");
  });
}
seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER, "test-init-fails", "0.1.0",
                                          "test: initialize() returns an error");
  p.initialize = initialize;
  return p;
}
const seatrt_plugin kDescriptor = make_descriptor();
}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
