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

// Collects events into a ParsedDelta.  The callbacks never throw (they are
// called from the plugin's frames): an event the ABI does not allow (NULL
// text with a length, a call without id or name, an index out of order) is
// remembered as `problem` and fails the request once the call returns.
struct Sink {
  ParsedDelta* out = nullptr;
  int32_t calls_seen = 0;  // tool-call indexes so far (0..calls_seen-1)
  std::string problem;

  void append(std::string& to, const char* t, size_t n, const char* event) noexcept {
    if (!problem.empty()) return;
    if (!t && n) {
      problem = std::string("a ") + event + " event with NULL text of length " + std::to_string(n);
      return;
    }
    try {
      to.append(t ? t : "", n);
    } catch (...) {
      problem = std::string("a ") + event + " event that could not be stored";
    }
  }
  static void content(void* u, const char* t, size_t n) noexcept {
    auto* s = static_cast<Sink*>(u);
    s->append(s->out->content, t, n, "content");
  }
  static void reasoning(void* u, const char* t, size_t n) noexcept {
    auto* s = static_cast<Sink*>(u);
    s->append(s->out->reasoning, t, n, "reasoning");
  }
  static void tool_call(void* u, int32_t index, const char* id, const char* name, const char* args, size_t n) noexcept {
    auto* s = static_cast<Sink*>(u);
    if (!s->problem.empty()) return;
    if (index < 0 || index > s->calls_seen) {
      s->problem = "a tool call with index " + std::to_string(index) + " (the next is " +
                   std::to_string(s->calls_seen) + ")";
      return;
    }
    auto& calls = s->out->tool_calls;
    if (!calls.empty() && calls.back().index == index) {
      s->append(calls.back().arguments, args, n, "tool_call");
      return;
    }
    if (index == s->calls_seen && (!id || !*id || !name || !*name)) {
      s->problem = "tool call " + std::to_string(index) + " without an id or a name";
      return;
    }
    try {
      calls.push_back({index, id ? id : "", name ? name : "", ""});
    } catch (...) {
      s->problem = "a tool_call event that could not be stored";
      return;
    }
    if (index == s->calls_seen) ++s->calls_seen;
    s->append(calls.back().arguments, args, n, "tool_call");
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

// Runs one call into the parser plugin `name` and turns what went wrong
// into an exception naming it: its error status (INVALID_ARG: the client's
// 400), an exception it let cross the ABI, or a problem its events had.
template <class Call>
void call_parser(const std::string& name, const char* what, Sink* sink, Call&& call) {
  seatrt_status* status = nullptr;
  try {
    status = call();
  } catch (...) {
    throw std::runtime_error("parser '" + name + "' " + what + " threw an exception across the plugin ABI");
  }
  if (sink && !sink->problem.empty()) {
    if (status) host::host_api()->status_free(status);
    throw std::runtime_error("parser '" + name + "' " + what + " sent " + sink->problem);
  }
  if (!status) return;
  const auto code = host::host_api()->status_code(status);
  const std::string msg = host::take_status_message(status);
  if (code == SEATRT_ERR_INVALID_ARG) throw bad_request(msg);
  throw std::runtime_error("parser '" + name + "' " + what + " failed: " + msg);
}

}  // namespace

struct ParserChain::Instance {
  const seatrt_parser_api* api = nullptr;
  std::string name;
  seatrt_parser* parser = nullptr;
  Sink sink;  // its events' tool-call state lasts the request
  ~Instance() {
    if (!parser) return;
    try {
      api->destroy(parser);
    } catch (...) {  // forbidden across the ABI; nothing to do but go on
    }
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
    inst->name = p.name;
    call_parser(p.name, "create", nullptr, [&] { return p.api->create(p.options_toml.c_str(), &req, &inst->parser); });
    if (!inst->parser) throw std::runtime_error("parser '" + p.name + "' create succeeded but returned no parser");
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
  Instance& first = reasoning_ ? *reasoning_ : *tool_;
  feed_one(first, ids, text, out);
  if (reasoning_ && tool_ && !out.content.empty()) {
    std::string content;
    content.swap(out.content);
    feed_one(*tool_, ids, content, out);
  }
  return out;
}

void ParserChain::feed_one(Instance& inst, const std::vector<int32_t>& ids, const std::string& text, ParsedDelta& out) {
  inst.sink.out = &out;
  auto events = inst.sink.events();
  call_parser(inst.name, "feed", &inst.sink, [&] {
    return inst.api->feed(inst.parser, ids.data(), ids.size(), text.data(), text.size(), &events);
  });
}

ParsedDelta ParserChain::finish(int32_t engine_reason, int32_t* client_reason) {
  ParsedDelta out;
  *client_reason = engine_reason;
  if (!reasoning_ && !tool_) return out;
  auto finish_one = [&](Instance& inst) {
    inst.sink.out = &out;
    auto events = inst.sink.events();
    call_parser(inst.name, "finish", &inst.sink,
                [&] { return inst.api->finish(inst.parser, engine_reason, &events, client_reason); });
  };
  if (reasoning_) finish_one(*reasoning_);
  if (tool_) {
    if (reasoning_ && !out.content.empty()) {
      std::string content;
      content.swap(out.content);
      feed_one(*tool_, {}, content, out);
    }
    finish_one(*tool_);
  }
  if (*client_reason < SEATRT_FINISH_STOP || *client_reason > SEATRT_FINISH_ERROR) *client_reason = engine_reason;
  return out;
}

std::vector<uint32_t> ParserChain::allowed_mask() {
  const size_t words = (static_cast<size_t>(vocab_.size) + 31) / 32;
  std::vector<uint32_t> combined;
  for (Instance* inst : {reasoning_.get(), tool_.get()}) {
    if (!inst || !inst->api->allowed_tokens) continue;
    std::vector<uint32_t> mask(words, 0);
    int32_t constrained = 0;
    call_parser(inst->name, "allowed_tokens", nullptr,
                [&] { return inst->api->allowed_tokens(inst->parser, mask.data(), words, &constrained); });
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
