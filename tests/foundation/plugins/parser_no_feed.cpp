// A tool parser ("test-parser-no-feed") whose table lacks feed(): the host
// must refuse it when the seat loads (check and serve alike), naming the
// plugin, its file and the slot, not crash on the first request.
#include "seatrt/cpp/plugin.hpp"

namespace {

seatrt_status* create(const char*, const seatrt_parser_request*, seatrt_parser** out) {
  *out = nullptr;
  return nullptr;
}
seatrt_status* finish(seatrt_parser*, int32_t reason, const seatrt_parser_events*, int32_t* client_reason) {
  *client_reason = reason;
  return nullptr;
}
void destroy(seatrt_parser*) {}

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

seatrt_parser_api make_table() {
  seatrt_parser_api t{};
  t.struct_size = sizeof t;
  t.create = create;
  t.finish = finish;
  t.destroy = destroy;  // feed left NULL
  return t;
}
const seatrt_parser_api kTable = make_table();

seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER, "test-parser-no-feed", "0.1.0",
                                          "test: a parser table without feed()");
  p.initialize = initialize;
  p.tool_parser = &kTable;
  return p;
}
const seatrt_plugin kDescriptor = make_descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
