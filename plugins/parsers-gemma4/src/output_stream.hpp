// The per-request state machine that splits Gemma-4 output text into
// content, reasoning and tool calls (docs: plugins/parsers-gemma4/README.md).
//
//   CONTENT   --<|channel>-->   REASONING --<channel|>--> CONTENT
//   CONTENT or REASONING --<|tool_call>--> CALL_HEAD ("call:NAME")
//   CALL_HEAD --'{'--> CALL_ARGS --(object closed)--> AFTER_ARGS
//   CALL_ARGS or AFTER_ARGS --<tool_call|>--> CONTENT
//
// Special tokens arrive as their text.  When the caller says where each
// piece came from (Origin), a control token is recognised only as a special
// token, so ordinary text that spells one (a model explaining Gemma's format)
// stays text, and a special token that is no control token of this format
// (<unk>, <mask>) is dropped, as skip_special_tokens drops it.  Text of
// unknown origin is read as before: control-token texts anywhere, a tail
// that may still become one held back.  UTF-8 tails are held back too, so
// any split of the same output into pieces gives the same result.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "args_converter.hpp"
#include "event_sink.hpp"
#include "utf8.hpp"

namespace seatrt::parsers::gemma4 {

struct StreamOptions {
  // The rendered prompt ends inside an open <|channel>: output starts as
  // reasoning.
  bool start_in_reasoning = false;
  // ... and the prompt has not written the "thought\n" label yet.
  bool expect_label_at_start = true;
  // enable_thinking: output that begins with a bare "thought\n" (its
  // <|channel> lost) is read as reasoning.
  bool thinking_enabled = false;
  // Names a call may have; a call naming anything else (or any call when
  // this is empty, e.g. tool_choice "none") is reported as content.
  std::vector<std::string> tool_names;
  // Makes the id of a new call.
  std::function<std::string()> make_call_id;
};

class OutputStream {
 public:
  // Where fed text came from: one whole special token, ordinary tokens, or
  // unknown (text alone, e.g. a split inside a token).
  enum class Origin : char { kUnknown = 'u', kText = 't', kSpecial = 'S' };

  explicit OutputStream(StreamOptions options);

  void feed(std::string_view text, EventSink& sink, Origin origin = Origin::kUnknown);
  // Flushes everything held back; the output has ended.
  void finish(EventSink& sink);

  int calls() const { return calls_; }
  // Inside a tool call (its head, arguments, or before its close).
  bool in_call() const { return state_ == State::kCallHead || state_ == State::kCallArgs || state_ == State::kAfterArgs; }
  // The last call was cut off before its arguments were complete.
  bool last_call_truncated() const { return truncated_; }

 private:
  enum class State { kContent, kReasoning, kCallHead, kCallArgs, kAfterArgs };

  void process(EventSink& sink, bool at_end);
  void on_text(std::string_view text, EventSink& sink);
  void on_marker(std::string_view marker, EventSink& sink);
  void emit_content(std::string_view text, EventSink& sink);
  void emit_reasoning(std::string_view text, EventSink& sink);
  void flush_label(EventSink& sink, bool closing);
  void flush_probe(EventSink& sink);
  void head_text(std::string_view text, EventSink& sink);
  void head_malformed(EventSink& sink);
  bool start_call(EventSink& sink);
  void args_text(std::string_view text, EventSink& sink);
  void drain_args(EventSink& sink);
  void end_call(EventSink& sink);

  StreamOptions options_;
  Utf8Sanitizer utf8_;
  std::string pending_;  // sanitized text not processed yet
  // One byte per byte of pending_: Origin's letter, 's' for a special
  // token's bytes after its first ('S').
  std::string origin_;
  State state_ = State::kContent;
  // Start of a reasoning span: text held while it may be the "thought\n" label.
  bool label_pending_ = false;
  std::string label_;
  // Start of the output with thinking on: held while it may be "thought\n".
  bool probe_pending_ = false;
  std::string probe_;
  std::string span_reasoning_;  // the current reasoning span's text
  bool content_sent_ = false;
  std::string head_;  // "call:NAME" of the call being opened
  ArgsConverter args_;
  int calls_ = 0;
  std::string call_id_;
  std::string call_name_;
  bool truncated_ = false;
};

}  // namespace seatrt::parsers::gemma4
