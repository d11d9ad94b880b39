// A plugin built against a newer minor (2.99) than any host: refused.
#include "seatrt/cpp/plugin.hpp"

namespace {
seatrt_status* initialize(const seatrt_host_api*) { return nullptr; }
seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER, "test-newer-minor", "2.99.0",
                                          "test: built for ABI 2.99");
  p.abi_minor = 99;
  p.initialize = initialize;
  return p;
}
const seatrt_plugin kDescriptor = make_descriptor();
}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
