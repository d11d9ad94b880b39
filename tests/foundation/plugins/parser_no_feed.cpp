// A tool parser ("test-parser-no-feed") whose table lacks feed(): the host
// must refuse it when the seat loads (check and serve alike), naming the
// plugin, its file and the slot, not crash on the first request.
#include "../../support/test_plugin.hpp"

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

seatrt_parser_api make_table() {
  seatrt_parser_api t{};
  t.struct_size = sizeof t;
  t.create = create;
  t.finish = finish;
  t.destroy = destroy;  // feed left NULL
  return t;
}
const seatrt_parser_api kTable = make_table();

const seatrt_plugin kDescriptor =
    seatrt::test::parser_plugin("test-parser-no-feed", "test: a parser table without feed()", &kTable);

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
