// A tool parser ("test-misbehaving-parser") that breaks the ABI on request,
// to show that the host survives it and fails only that request, naming the
// parser.  The rendered prompt's tail picks the fault:
//   MB_THROW      feed() throws an int across the ABI (no SDK guard)
//   MB_NULL_TEXT  feed() sends a content event with NULL text of length 5
//   MB_NO_PARSER  create() succeeds without making a parser
//   MB_EMPTY_MASK allowed_tokens() allows no token at all
//   MB_BAD_CALL   feed() sends a tool call with index 7 before any other
//   MB_SLOW       feed() takes 20 ms (a slow request, for drain tests)
//   MB_HOLD       the first feed() takes 50 ms (a slow parser); later ones
//                 wait until the file named by $SEATRT_TEST_RELEASE_FILE
//                 exists, so a test decides when the request may go on
// Otherwise all text is content and nothing is constrained.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <string>

#include "../../support/test_plugin.hpp"

struct seatrt_parser {
  std::string fault;
  int feeds = 0;
};

namespace {

const char* const kFaults[] = {"MB_THROW", "MB_NULL_TEXT", "MB_NO_PARSER", "MB_EMPTY_MASK", "MB_BAD_CALL",
                                "MB_SLOW", "MB_HOLD"};

seatrt_status* create(const char*, const seatrt_parser_request* req, seatrt_parser** out) {
  const std::string tail = req->prompt_tail ? std::string(req->prompt_tail, req->prompt_tail_len) : "";
  std::string fault;
  for (const char* f : kFaults)
    if (tail.find(f) != std::string::npos) fault = f;
  if (fault == "MB_NO_PARSER") {
    *out = nullptr;
    return nullptr;
  }
  *out = new seatrt_parser{fault};
  return nullptr;
}

seatrt_status* feed(seatrt_parser* p, const int32_t*, size_t, const char* text, size_t len,
                    const seatrt_parser_events* events) {
  if (p->fault == "MB_THROW") throw 42;  // what the SDK's guard exists to prevent
  if (p->fault == "MB_SLOW") std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (p->fault == "MB_HOLD" && p->feeds++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  else if (p->fault == "MB_HOLD") {
    const char* release = std::getenv("SEATRT_TEST_RELEASE_FILE");
    while (release && !std::filesystem::exists(release)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (p->fault == "MB_NULL_TEXT") {
    events->content(events->user_data, nullptr, 5);
    return nullptr;
  }
  if (p->fault == "MB_BAD_CALL") {
    events->tool_call(events->user_data, 7, "call_x", "f", "{}", 2);
    return nullptr;
  }
  events->content(events->user_data, text, len);
  return nullptr;
}

seatrt_status* finish(seatrt_parser*, int32_t reason, const seatrt_parser_events*, int32_t* client_reason) {
  *client_reason = reason;
  return nullptr;
}

seatrt_status* allowed_tokens(seatrt_parser* p, uint32_t* mask, size_t words, int32_t* constrained) {
  *constrained = p->fault == "MB_EMPTY_MASK" ? 1 : 0;
  std::memset(mask, 0, words * sizeof(uint32_t));
  return nullptr;
}

void destroy(seatrt_parser* p) { delete p; }

seatrt_parser_api make_table() {
  seatrt_parser_api t{};
  t.struct_size = sizeof t;
  t.create = create;
  t.feed = feed;
  t.finish = finish;
  t.allowed_tokens = allowed_tokens;
  t.destroy = destroy;
  return t;
}
const seatrt_parser_api kTable = make_table();

const seatrt_plugin kDescriptor =
    seatrt::test::parser_plugin("test-misbehaving-parser", "test: breaks the parser ABI on request", &kTable);

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
