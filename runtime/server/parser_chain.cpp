#include "parser_chain.hpp"

#include <stdexcept>

#include "api_error.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::server {

namespace {

void vocab_token_bytes(const seatrt_vocab* vocab, int32_t id, const char** data, size_t* len) {
  const auto* tok = static_cast<const text::Tokenizer*>(vocab->host_state);
  const std::string_view bytes = tok->token_bytes(id);
  *data = bytes.data();
  *len = bytes.size();
}
int32_t vocab_token_id(const seatrt_vocab* vocab, const char* text) {
  return static_cast<const text::Tokenizer*>(vocab->host_state)->token_id(text ? text : "");
}
int32_t vocab_is_special(const seatrt_vocab* vocab, int32_t id) {
  return static_cast<const text::Tokenizer*>(vocab->host_state)->is_special(id) ? 1 : 0;
}

// Collects events into a ParsedDelta.
struct Sink {
  ParsedDelta* out = nullptr;
  static void content(void* u, const char* t, size_t n) { static_cast<Sink*>(u)->out->content.append(t, n); }
  static void reasoning(void* u, const char* t, size_t n) { static_cast<Sink*>(u)->out->reasoning.append(t, n); }
  static void tool_call(void* u, int32_t index, const char* id, const char* name, const char* args, size_t n) {
    auto& calls = static_cast<Sink*>(u)->out->tool_calls;
    if (!calls.empty() && calls.back().index == index) {
      calls.back().arguments.append(args, n);
    } else {
      calls.push_back({index, id ? id : "", name ? name : "", std::string(args, n)});
    }
  }
  seatrt_parser_events events() {
    seatrt_parser_events e{};
    e.struct_size = sizeof e;
    e.user_data = this;
    e.content = &Sink::content;
    e.reasoning = &Sink::reasoning;
    e.tool_call = &Sink::tool_call;
    return e;
  }
};

void check(seatrt_status* status, const char* what) {
  if (!status) return;
  const auto code = host::host_api()->status_code(status);
  const std::string msg = host::take_status_message(status);
  if (code == SEATRT_ERR_INVALID_ARG) throw bad_request(msg);
  throw std::runtime_error(std::string("parser ") + what + " failed: " + msg);
}

}  // namespace

struct ParserChain::Instance {
  const seatrt_parser_api* api = nullptr;
  seatrt_parser* parser = nullptr;
  ~Instance() {
    if (parser) api->destroy(parser);
  }
};

ParserChain::ParserChain(const SeatRuntime& seat, const ParserRequestInfo& info) : seat_(seat) {
  vocab_.struct_size = sizeof vocab_;
  vocab_.size = seat.tokenizer->vocab_size();
  vocab_.host_state = seat.tokenizer.get();
  vocab_.token_bytes = &vocab_token_bytes;
  vocab_.token_id = &vocab_token_id;
  vocab_.is_special = &vocab_is_special;

  seatrt_parser_request req{};
  req.struct_size = sizeof req;
  req.request_id = info.request_id.c_str();
  req.tools_json = info.tools_json.c_str();
  req.tool_choice_json = info.tool_choice_json.c_str();
  req.response_format_json = info.response_format_json.c_str();
  req.chat_template_kwargs_json = info.chat_template_kwargs_json.c_str();
  req.prompt_tail = info.prompt_tail.data();
  req.prompt_tail_len = info.prompt_tail.size();
  req.vocab = &vocab_;
  req.parallel_tool_calls = info.parallel_tool_calls ? 1 : 0;
  auto make = [&](const ParserPlugin& p) {
    auto inst = std::make_unique<Instance>();
    inst->api = p.api;
    check(p.api->create(p.options_toml.c_str(), &req, &inst->parser), "create");
    return inst;
  };
  if (seat.reasoning_parser.api) reasoning_ = make(seat.reasoning_parser);
  if (seat.tool_parser.api && seat.tool_parser.api != seat.reasoning_parser.api) tool_ = make(seat.tool_parser);
}

ParserChain::~ParserChain() = default;

ParsedDelta ParserChain::feed(const std::vector<int32_t>& ids, const std::string& text) {
  ParsedDelta out;
  if (!reasoning_ && !tool_) {
    out.content = text;
    return out;
  }
  Sink sink{&out};
  auto events = sink.events();
  if (!reasoning_) {
    check(tool_->api->feed(tool_->parser, ids.data(), ids.size(), text.data(), text.size(), &events), "feed");
    return out;
  }
  check(reasoning_->api->feed(reasoning_->parser, ids.data(), ids.size(), text.data(), text.size(), &events), "feed");
  if (tool_ && !out.content.empty()) {
    std::string content;
    content.swap(out.content);
    check(tool_->api->feed(tool_->parser, ids.data(), ids.size(), content.data(), content.size(), &events), "feed");
  }
  return out;
}

ParsedDelta ParserChain::finish(int32_t engine_reason, int32_t* client_reason) {
  ParsedDelta out;
  *client_reason = engine_reason;
  if (!reasoning_ && !tool_) return out;
  Sink sink{&out};
  auto events = sink.events();
  if (reasoning_) {
    check(reasoning_->api->finish(reasoning_->parser, engine_reason, &events, client_reason), "finish");
  }
  if (tool_) {
    if (!out.content.empty()) {
      std::string content;
      content.swap(out.content);
      check(tool_->api->feed(tool_->parser, nullptr, 0, content.data(), content.size(), &events), "feed");
    }
    check(tool_->api->finish(tool_->parser, engine_reason, &events, client_reason), "finish");
  }
  return out;
}

std::vector<uint32_t> ParserChain::allowed_mask() {
  const size_t words = (static_cast<size_t>(vocab_.size) + 31) / 32;
  std::vector<uint32_t> combined;
  for (Instance* inst : {reasoning_.get(), tool_.get()}) {
    if (!inst || !inst->api->allowed_tokens) continue;
    std::vector<uint32_t> mask(words, 0);
    int32_t constrained = 0;
    check(inst->api->allowed_tokens(inst->parser, mask.data(), words, &constrained), "allowed_tokens");
    if (!constrained) continue;
    if (combined.empty()) {
      combined = std::move(mask);
    } else {
      for (size_t i = 0; i < words; ++i) combined[i] &= mask[i];
    }
  }
  return combined;
}

}  // namespace seatrt::server
