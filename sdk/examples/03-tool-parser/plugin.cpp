// Example 3: the ABI side of a complete tool-call parser.  One parser object
// per request (create/destroy); feed() and finish() translate CallParser's
// callbacks into the host's event callbacks.  allowed_tokens is NULL: this
// parser never constrains decoding.
#include <memory>
#include <string>

#include "call_parser.hpp"
#include "seatrt/cpp/plugin.hpp"

// The opaque handle the host holds: one per request, no shared state.
struct seatrt_parser {
  example_parser::CallParser parser;
};

namespace {

using seatrt::sdk::Error;
using seatrt::sdk::guard;

// Routes the parser's output to the host's events for one call.
example_parser::CallParser::Sink sink_for(const seatrt_parser_events* events) {
  example_parser::CallParser::Sink sink;
  sink.content = [events](std::string_view text) {
    if (!text.empty()) events->content(events->user_data, text.data(), text.size());
  };
  sink.tool_call = [events](int index, const std::string& id, const std::string& name,
                            std::string_view arguments) {
    events->tool_call(events->user_data, index, id.c_str(), name.c_str(), arguments.data(),
                      arguments.size());
  };
  return sink;
}

seatrt_status* create(const char* /*options_toml*/, const seatrt_parser_request* request,
                      seatrt_parser** out) {
  return guard([&] {
    if (request == nullptr || out == nullptr) throw Error(SEATRT_ERR_INVALID_ARG, "NULL argument");
    // tool_choice "none": the client asked for no calls, so CALL lines are
    // plain content.
    const std::string choice = request->tool_choice_json ? request->tool_choice_json : "";
    const bool calls_enabled = choice != "\"none\"";
    *out = new seatrt_parser{example_parser::CallParser(calls_enabled)};
  });
}

seatrt_status* feed(seatrt_parser* parser, const int32_t* /*ids*/, size_t /*n_ids*/,
                    const char* text, size_t text_len, const seatrt_parser_events* events) {
  // Token ids are not needed: the format is plain text.  UTF-8 needs no
  // care either: the parser splits on '\n' only, never inside a character.
  return guard([&] { parser->parser.feed(std::string_view(text, text_len), sink_for(events)); });
}

seatrt_status* finish(seatrt_parser* parser, int32_t reason, const seatrt_parser_events* events,
                      int32_t* client_reason) {
  return guard([&] {
    parser->parser.finish(sink_for(events));
    // A turn that made calls ends with finish_reason "tool_calls" (unless it
    // was cut off by length or failed).
    const bool called = parser->parser.calls_made() > 0;
    *client_reason = called && reason == SEATRT_FINISH_STOP ? SEATRT_FINISH_TOOL_CALLS : reason;
  });
}

void destroy(seatrt_parser* parser) { delete parser; }

seatrt_status* initialize(const seatrt_host_api* host) {
  return guard([&] { seatrt::sdk::set_host(host); });
}

seatrt_parser_api make_table() {
  seatrt_parser_api t{};
  t.struct_size = sizeof t;
  t.create = create;
  t.feed = feed;
  t.finish = finish;
  t.allowed_tokens = nullptr;  // no constrained decoding
  t.destroy = destroy;
  return t;
}

const seatrt_parser_api kTable = make_table();

seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER, "example-call", "0.1.0",
                                          "SDK example 3: `CALL name {json}` lines become tool calls");
  p.initialize = initialize;
  p.tool_parser = &kTable;
  return p;
}

const seatrt_plugin kDescriptor = make_descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kDescriptor)
