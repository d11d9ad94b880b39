// A second tool parser ("test-shout") for the swap test: it makes no tool
// calls and returns all text as content, upper-cased, so that swapping it
// in for another parser visibly changes behaviour.
#include <cctype>
#include <string>

#include "seatrt/cpp/plugin.hpp"

struct seatrt_parser {
  int unused = 0;
};

namespace {

seatrt_status* create(const char*, const seatrt_parser_request*, seatrt_parser** out) {
  return seatrt::sdk::guard([&] { *out = new seatrt_parser{}; });
}

seatrt_status* feed(seatrt_parser*, const int32_t*, size_t, const char* text, size_t len,
                    const seatrt_parser_events* events) {
  return seatrt::sdk::guard([&] {
    std::string upper(text, len);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    events->content(events->user_data, upper.data(), upper.size());
  });
}

seatrt_status* finish(seatrt_parser*, int32_t reason, const seatrt_parser_events*,
                      int32_t* client_reason) {
  *client_reason = reason;
  return nullptr;
}

void destroy(seatrt_parser* p) { delete p; }

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

seatrt_parser_api make_table() {
  seatrt_parser_api t{};
  t.struct_size = sizeof t;
  t.create = create;
  t.feed = feed;
  t.finish = finish;
  t.destroy = destroy;
  return t;
}
const seatrt_parser_api kTable = make_table();

seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER, "test-shout", "0.1.0",
                                          "test: content upper-cased, no tool calls");
  p.initialize = initialize;
  p.tool_parser = &kTable;
  return p;
}
const seatrt_plugin kDescriptor = make_descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
