#include "gemma4_parser.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "markers.hpp"

namespace seatrt::parsers::gemma4 {
namespace {

std::vector<ToolSchema> forced_tools(const RequestOptions& o) {
  std::vector<ToolSchema> tools;
  for (const auto& tool : o.tools) {
    const auto& fn = tool["function"];
    const std::string name = fn["name"].get<std::string>();
    if (o.tool_choice == ToolChoice::kNamed && name != o.named_function) continue;
    auto params = fn.find("parameters");
    tools.push_back({name, params == fn.end() ? nullptr : &*params});
  }
  return tools;
}

}  // namespace

Gemma4Parser::Gemma4Parser(std::string_view options_toml, const seatrt_parser_request& request)
    : options_(read_request(options_toml, request)), vocab_(request.vocab), rng_(std::random_device{}()) {
  StreamOptions s;
  s.start_in_reasoning = options_.prompt_in_channel;
  s.expect_label_at_start = !options_.prompt_wrote_label;
  s.thinking_enabled = options_.enable_thinking;
  // tool_choice "none": calls are not parsed; any call syntax the model
  // still writes comes back as content (its control tokens dropped).
  if (options_.tool_choice != ToolChoice::kNone) s.tool_names = options_.tool_names;
  s.make_call_id = [this] { return next_call_id(); };
  stream_ = std::make_unique<OutputStream>(std::move(s));

  const bool forced = options_.tool_choice == ToolChoice::kRequired || options_.tool_choice == ToolChoice::kNamed;
  if (!forced && !options_.parallel_calls && options_.tool_choice == ToolChoice::kAuto && request.vocab) {
    for (std::string_view text : kStopTokenTexts) {
      const int32_t id = request.vocab->token_id(request.vocab, std::string(text).c_str());
      if (id >= 0) one_call_stops_.push_back(id);
    }
  }
  const bool json_answer = options_.format != ResponseFormat::kText;
  if (!(forced || json_answer)) return;
  RootOptions root;
  root.allow_thought = options_.enable_thinking;
  root.start_in_thought = options_.prompt_in_channel;
  std::shared_ptr<const Grammar> grammar;
  if (forced) {
    grammar = std::make_shared<Grammar>(compile_tool_calls(forced_tools(options_),
                                                           options_.tool_choice == ToolChoice::kRequired &&
                                                               options_.parallel_calls,
                                                           root, options_.limits));
  } else {
    const nlohmann::json* schema = options_.format == ResponseFormat::kJsonSchema ? &options_.format_schema : nullptr;
    grammar = std::make_shared<Grammar>(compile_json(schema, root, options_.limits));
  }
  // Without a vocabulary there is nothing to mask; parsing still works.
  if (request.vocab && request.vocab->size > 0) {
    decoder_ = std::make_unique<ConstrainedDecoder>(grammar, shared_token_trie(*request.vocab), *request.vocab);
  }
}

bool Gemma4Parser::is_control(int32_t id, std::string_view piece) const {
  if (vocab_->is_special(vocab_, id)) return true;
  // A tokenizer that does not flag its control tokens special (some
  // re-packs): a control token's text is still one token, the one the
  // vocabulary gives for that text; an ordinary piece spelling it is not.
  if (std::find(kAllMarkers.begin(), kAllMarkers.end(), piece) == kAllMarkers.end()) return false;
  return vocab_->token_id(vocab_, std::string(piece).c_str()) == id;
}

std::string Gemma4Parser::next_call_id() {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<size_t> pick(0, sizeof(kAlphabet) - 2);
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(rng_)];
  return id;
}

void Gemma4Parser::feed(const int32_t* ids, size_t n_ids, std::string_view text, EventSink& sink) {
  if (decoder_ && decoder_->active()) {
    for (size_t i = 0; i < n_ids; ++i) {
      if (!decoder_->accept_token(ids[i])) break;  // off the grammar: no longer constrained
    }
  }
  // Token by token when the ids spell exactly `text` (the host's normal
  // feed), so control tokens are known by their ids; otherwise as text.
  if (vocab_ && n_ids > 0) {
    std::vector<std::string_view> pieces;
    size_t at = 0;
    bool spelled = true;
    for (size_t i = 0; i < n_ids && spelled; ++i) {
      const char* data = nullptr;
      size_t len = 0;
      vocab_->token_bytes(vocab_, ids[i], &data, &len);
      const std::string_view piece(data ? data : "", data ? len : 0);
      spelled = text.substr(at).starts_with(piece);
      pieces.push_back(piece);
      at += piece.size();
    }
    if (spelled && at == text.size()) {
      for (size_t i = 0; i < n_ids; ++i) {
        stream_->feed(pieces[i], sink,
                      is_control(ids[i], pieces[i]) ? OutputStream::Origin::kSpecial : OutputStream::Origin::kText);
      }
      return;
    }
  }
  stream_->feed(text, sink);
}

int32_t Gemma4Parser::finish(int32_t reason, EventSink& sink) {
  stream_->finish(sink);
  if (stream_->calls() > 0) {
    if (stream_->last_call_truncated()) return SEATRT_FINISH_LENGTH;
    // OpenAI reports "stop" when a named function was forced.
    return options_.tool_choice == ToolChoice::kNamed ? SEATRT_FINISH_STOP : SEATRT_FINISH_TOOL_CALLS;
  }
  if (reason == SEATRT_FINISH_LENGTH || reason == SEATRT_FINISH_ERROR) return reason;
  return SEATRT_FINISH_STOP;
}

bool Gemma4Parser::allowed_tokens(uint32_t* mask, size_t words) {
  if (!one_call_stops_.empty() && stream_->calls() > 0 && !stream_->in_call()) {
    // parallel_tool_calls false: the one call is written; only a stop now.
    std::fill(mask, mask + words, 0u);
    for (int32_t id : one_call_stops_)
      if (static_cast<size_t>(id) / 32 < words) mask[static_cast<size_t>(id) / 32] |= 1u << (id % 32);
    return true;
  }
  if (!decoder_ || !decoder_->active()) return false;
  decoder_->allowed(mask, words);
  return true;
}

}  // namespace seatrt::parsers::gemma4
