// A tool parser whose name holds a '/' and a newline: no seat could name it,
// and printing it would forge lines; the loader must refuse it.
#include "../../support/test_plugin.hpp"

namespace {
const seatrt_parser_api kTable = [] {
  seatrt_parser_api t{};
  t.struct_size = sizeof t;
  return t;
}();
const seatrt_plugin kDescriptor = seatrt::test::parser_plugin("bad/name\nok", "test: an unusable name", &kTable);
}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
