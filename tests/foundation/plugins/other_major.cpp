// A plugin built against ABI major 1 (1.7): the host (major 2) must refuse it,
// naming both versions, without calling anything but the entry point.
#include "seatrt/cpp/plugin.hpp"

namespace {
seatrt_status* initialize(const seatrt_host_api*) { return nullptr; }
seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER, "test-other-major", "1.7.0",
                                          "test: built for ABI 1.7");
  p.abi_major = 1;
  p.abi_minor = 7;
  p.initialize = initialize;
  return p;
}
const seatrt_plugin kDescriptor = make_descriptor();
}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
