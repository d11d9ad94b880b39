// The plugin's ABI shim: one seatrt_parser_api table serving both the tool
// and the reasoning parser kinds (one instance does both), forwarding to
// Gemma4Parser.  Every entry point catches everything (sdk::guard).
#include <string>

#include "gemma4_parser.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace {

using seatrt::parsers::gemma4::EventSink;
using seatrt::parsers::gemma4::Gemma4Parser;

// Forwards events to the host's callbacks (a NULL callback drops its events).
class HostEvents final : public EventSink {
 public:
  explicit HostEvents(const seatrt_parser_events* events) : e_(events) {}
  void content(std::string_view text) override {
    if (e_ && e_->content) e_->content(e_->user_data, text.data(), text.size());
  }
  void reasoning(std::string_view text) override {
    if (e_ && e_->reasoning) e_->reasoning(e_->user_data, text.data(), text.size());
  }
  void tool_call(int index, const std::string& id, const std::string& name, std::string_view delta) override {
    if (e_ && e_->tool_call) e_->tool_call(e_->user_data, index, id.c_str(), name.c_str(), delta.data(), delta.size());
  }

 private:
  const seatrt_parser_events* e_;
};

Gemma4Parser* as_parser(seatrt_parser* p) { return reinterpret_cast<Gemma4Parser*>(p); }

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

seatrt_status* create(const char* options_toml, const seatrt_parser_request* request, seatrt_parser** out) {
  return seatrt::sdk::guard([&]() -> seatrt_status* {
    if (!request || !out) return seatrt::sdk::make_status(SEATRT_ERR_INVALID_ARG, "create: request and out are required");
    *out = nullptr;
    try {
      auto parser = std::make_unique<Gemma4Parser>(options_toml ? options_toml : "", *request);
      *out = reinterpret_cast<seatrt_parser*>(parser.release());
      return nullptr;
    } catch (const std::invalid_argument& e) {
      return seatrt::sdk::make_status(SEATRT_ERR_INVALID_ARG, e.what());
    }
  });
}

seatrt_status* feed(seatrt_parser* parser, const int32_t* ids, size_t n_ids, const char* text, size_t text_len,
                    const seatrt_parser_events* events) {
  return seatrt::sdk::guard([&]() -> seatrt_status* {
    if (!parser || (n_ids > 0 && !ids) || (text_len > 0 && !text)) {
      return seatrt::sdk::make_status(SEATRT_ERR_INVALID_ARG, "feed: null parser, ids or text");
    }
    HostEvents sink(events);
    as_parser(parser)->feed(ids, n_ids, std::string_view(text ? text : "", text_len), sink);
    return nullptr;
  });
}

seatrt_status* finish(seatrt_parser* parser, int32_t reason, const seatrt_parser_events* events,
                      int32_t* client_reason) {
  return seatrt::sdk::guard([&]() -> seatrt_status* {
    if (!parser) return seatrt::sdk::make_status(SEATRT_ERR_INVALID_ARG, "finish: null parser");
    HostEvents sink(events);
    const int32_t r = as_parser(parser)->finish(reason, sink);
    if (client_reason) *client_reason = r;
    return nullptr;
  });
}

seatrt_status* allowed_tokens(seatrt_parser* parser, uint32_t* mask, size_t words, int32_t* constrained) {
  return seatrt::sdk::guard([&]() -> seatrt_status* {
    if (!parser || !constrained) return seatrt::sdk::make_status(SEATRT_ERR_INVALID_ARG, "allowed_tokens: null argument");
    *constrained = 0;
    if (mask && words > 0 && as_parser(parser)->allowed_tokens(mask, words)) *constrained = 1;
    return nullptr;
  });
}

void destroy(seatrt_parser* parser) {
  try {
    delete as_parser(parser);
  } catch (...) {
  }
}

constexpr seatrt_parser_api kApi = {sizeof(seatrt_parser_api), 0, create, feed, finish, allowed_tokens, destroy};

seatrt_plugin make_descriptor() {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_TOOL_PARSER | SEATRT_KIND_REASONING_PARSER, "gemma4", "0.1.0",
                                          "Gemma-4 tool calls and reasoning, with constrained decoding");
  p.initialize = initialize;
  p.tool_parser = &kApi;
  p.reasoning_parser = &kApi;
  return p;
}

const seatrt_plugin kPlugin = make_descriptor();

}  // namespace

SEATRT_DEFINE_PLUGIN(kPlugin)
