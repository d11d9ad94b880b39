// A tool parser whose initialize() lets a C++ exception escape: forbidden by
// the ABI, so this is the misbehaving third-party plugin the host must
// survive (report it, keep running).
#include <stdexcept>

#include "seatrt/cpp/plugin.hpp"

namespace {
seatrt_status* initialize(const seatrt_host_api*) {
  throw std::runtime_error("test-init-throws: exception escaping initialize");
}
seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER, "test-init-throws", "0.1.0",
                                          "test: initialize() throws");
  p.initialize = initialize;
  return p;
}
const seatrt_plugin kDescriptor = make_descriptor();
}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
