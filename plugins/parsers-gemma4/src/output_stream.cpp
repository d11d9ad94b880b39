#include "output_stream.hpp"

#include <algorithm>
#include <utility>

#include "markers.hpp"

namespace seatrt::parsers::gemma4 {
namespace {

constexpr size_t kMaxHead = 256;  // "call:NAME" longer than this is not a call

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

// The NAME of a call head "call:NAME" (or the tolerated ":NAME"); `complete`
// false accepts a head that may still become valid.  nullopt when invalid.
bool head_ok(std::string_view head, bool complete, std::string_view* name) {
  constexpr std::string_view kCall = "call:";
  if (head.size() > kMaxHead) return false;
  std::string_view rest;
  if (head.starts_with(kCall)) {
    rest = head.substr(kCall.size());
  } else if (head.starts_with(":")) {
    rest = head.substr(1);
  } else {
    return !complete && kCall.starts_with(head);
  }
  if (!std::all_of(rest.begin(), rest.end(), is_name_char)) return false;
  if (complete && rest.empty()) return false;
  if (name) *name = rest;
  return true;
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

}  // namespace

OutputStream::OutputStream(StreamOptions options) : options_(std::move(options)) {
  if (options_.start_in_reasoning) {
    state_ = State::kReasoning;
    label_pending_ = options_.expect_label_at_start;
  } else {
    probe_pending_ = options_.thinking_enabled;
  }
}

void OutputStream::feed(std::string_view text, EventSink& sink, Origin origin) {
  const std::string out = utf8_.push(text);
  // A special token's text comes out whole after whatever the sanitizer
  // held (an unfinished sequence of earlier text, now repaired).
  const bool whole = origin == Origin::kSpecial && !text.empty() && out.size() >= text.size() &&
                     std::string_view(out).substr(out.size() - text.size()) == text;
  if (origin == Origin::kSpecial && !whole) origin = Origin::kUnknown;
  if (origin == Origin::kSpecial) {
    origin_.append(out.size() - text.size(), static_cast<char>(Origin::kText));
    origin_ += static_cast<char>(Origin::kSpecial);
    origin_.append(text.size() - 1, 's');
  } else {
    origin_.append(out.size(), static_cast<char>(origin));
  }
  pending_ += out;
  process(sink, false);
}

void OutputStream::finish(EventSink& sink) {
  const std::string out = utf8_.flush();
  pending_ += out;
  origin_.append(out.size(), static_cast<char>(Origin::kText));
  process(sink, true);
  flush_probe(sink);
  switch (state_) {
    case State::kReasoning:
      flush_label(sink, true);
      // A thought cut off (never closed) with nothing else said: its text is
      // also the answer, so content is never left empty (vllm#49717).
      if (!content_sent_ && calls_ == 0 && !span_reasoning_.empty()) {
        emit_content(span_reasoning_, sink);
      }
      break;
    case State::kCallHead:
      head_malformed(sink);
      break;
    case State::kCallArgs:
      args_.close();
      drain_args(sink);
      truncated_ = true;
      break;
    case State::kContent:
    case State::kAfterArgs:
      break;
  }
  state_ = State::kContent;
}

void OutputStream::process(EventSink& sink, bool at_end) {
  const std::string_view view = pending_;
  const std::string_view from = origin_;
  const auto is = [&](size_t k, Origin o) { return from[k] == static_cast<char>(o); };
  size_t i = 0;
  while (i < view.size()) {
    // Plain text up to the next special token or '<' of unknown origin.
    size_t j = i;
    while (j < view.size() && !is(j, Origin::kSpecial) && !(view[j] == '<' && is(j, Origin::kUnknown))) ++j;
    if (j > i) {
      on_text(view.substr(i, j - i), sink);
      i = j;
      continue;
    }
    if (is(i, Origin::kSpecial)) {
      size_t end = i + 1;
      while (end < view.size() && from[end] == 's') ++end;
      const std::string_view token = view.substr(i, end - i);
      const auto* marker = std::find(kAllMarkers.begin(), kAllMarkers.end(), token);
      // A special token that is no control token of this format is dropped.
      if (marker != kAllMarkers.end()) on_marker(*marker, sink);
      i = end;
      continue;
    }
    // '<' of unknown origin: control-token texts are read from the text.
    size_t run = i;
    while (run < view.size() && is(run, Origin::kUnknown)) ++run;
    const std::string_view rest = view.substr(i, run - i);
    const auto* marker = std::find_if(kAllMarkers.begin(), kAllMarkers.end(),
                                      [&](std::string_view m) { return rest.starts_with(m); });
    if (marker != kAllMarkers.end()) {
      on_marker(*marker, sink);
      i += marker->size();
      continue;
    }
    const bool may_become_marker =
        run == view.size() && std::any_of(kAllMarkers.begin(), kAllMarkers.end(), [&](std::string_view m) {
          return m.size() > rest.size() && m.starts_with(rest);
        });
    if (may_become_marker && !at_end) break;  // hold back until it resolves
    on_text(view.substr(i, 1), sink);
    i += 1;
  }
  pending_.erase(0, i);
  origin_.erase(0, i);
}

void OutputStream::on_text(std::string_view text, EventSink& sink) {
  if (text.empty()) return;
  switch (state_) {
    case State::kContent:
      if (probe_pending_) {
        std::string seen = probe_ + std::string(text);
        if (kThoughtLabel.starts_with(seen) || seen.starts_with(kThoughtLabel)) {
          if (seen.size() < kThoughtLabel.size()) {
            probe_ = std::move(seen);
            return;
          }
          // A bare "thought\n" opened the output: a thought whose <|channel>
          // was lost.
          probe_pending_ = false;
          probe_.clear();
          state_ = State::kReasoning;
          span_reasoning_.clear();
          on_text(std::string_view(seen).substr(kThoughtLabel.size()), sink);
          return;
        }
        probe_pending_ = false;
        probe_.clear();
        emit_content(seen, sink);
        return;
      }
      emit_content(text, sink);
      return;
    case State::kReasoning:
      if (label_pending_) {
        std::string seen = label_ + std::string(text);
        if (kThoughtLabel.starts_with(seen) && seen.size() < kThoughtLabel.size()) {
          label_ = std::move(seen);
          return;
        }
        label_pending_ = false;
        label_.clear();
        if (seen.starts_with(kThoughtLabel)) {
          emit_reasoning(std::string_view(seen).substr(kThoughtLabel.size()), sink);
        } else {
          emit_reasoning(seen, sink);
        }
        return;
      }
      emit_reasoning(text, sink);
      return;
    case State::kCallHead:
      head_text(text, sink);
      return;
    case State::kCallArgs:
      args_text(text, sink);
      return;
    case State::kAfterArgs: {
      size_t k = 0;
      while (k < text.size() && is_space(text[k])) ++k;
      if (k == text.size()) return;
      // Text after the arguments without <tool_call|>: the call is over.
      state_ = State::kContent;
      on_text(text.substr(k), sink);
      return;
    }
  }
}

void OutputStream::on_marker(std::string_view marker, EventSink& sink) {
  switch (state_) {
    case State::kContent:
      flush_probe(sink);
      if (marker == kChannelOpen) {
        state_ = State::kReasoning;
        label_pending_ = true;
        label_.clear();
        span_reasoning_.clear();
      } else if (marker == kToolCallOpen) {
        if (!options_.tool_names.empty()) {
          state_ = State::kCallHead;
          head_.clear();
        }  // no tools: the call's text is content (its markers dropped)
      } else if (marker == kStringDelim) {
        emit_content("\"", sink);
      }  // stray closers and turn/media control tokens are dropped
      return;
    case State::kReasoning:
      if (marker == kChannelClose) {
        flush_label(sink, true);
        state_ = State::kContent;
      } else if (marker == kToolCallOpen) {
        flush_label(sink, true);
        state_ = State::kContent;
        on_marker(marker, sink);
      } else if (marker == kStringDelim) {
        on_text("\"", sink);
      }  // a second <|channel> and other control tokens are swallowed
      return;
    case State::kCallHead:
      if (marker == kStringDelim) head_ += '"';
      head_malformed(sink);
      if (marker != kToolCallClose && marker != kStringDelim) on_marker(marker, sink);
      return;
    case State::kCallArgs:
      if (marker == kStringDelim) {
        args_.delimiter();
        drain_args(sink);
        if (args_.done()) state_ = State::kAfterArgs;
        return;
      }
      end_call(sink);
      if (marker != kToolCallClose) on_marker(marker, sink);
      return;
    case State::kAfterArgs:
      state_ = State::kContent;
      if (marker != kToolCallClose) on_marker(marker, sink);
      return;
  }
}

void OutputStream::emit_content(std::string_view text, EventSink& sink) {
  if (text.empty()) return;
  content_sent_ = true;
  sink.content(text);
}

void OutputStream::emit_reasoning(std::string_view text, EventSink& sink) {
  if (text.empty()) return;
  span_reasoning_.append(text);
  sink.reasoning(text);
}

void OutputStream::flush_label(EventSink& sink, bool closing) {
  if (!label_pending_) return;
  label_pending_ = false;
  // A thought that is only its label ("thought") says nothing.
  if (!(closing && label_ == "thought")) emit_reasoning(label_, sink);
  label_.clear();
}

void OutputStream::flush_probe(EventSink& sink) {
  if (!probe_pending_) return;
  probe_pending_ = false;
  emit_content(probe_, sink);
  probe_.clear();
}

void OutputStream::head_text(std::string_view text, EventSink& sink) {
  for (size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '{') {
      if (start_call(sink)) {
        args_text(text.substr(k), sink);
      } else {
        head_malformed(sink);
        on_text(text.substr(k), sink);
      }
      return;
    }
    head_ += text[k];
    if (!head_ok(head_, false, nullptr)) {
      head_malformed(sink);
      on_text(text.substr(k + 1), sink);
      return;
    }
  }
}

void OutputStream::head_malformed(EventSink& sink) {
  // Not a call after all: its text (markers dropped) is content.
  state_ = State::kContent;
  std::string text;
  text.swap(head_);
  emit_content(text, sink);
}

bool OutputStream::start_call(EventSink& sink) {
  std::string_view name;
  if (!head_ok(head_, true, &name)) return false;
  const auto& names = options_.tool_names;
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  call_name_ = std::string(name);
  call_id_ = options_.make_call_id ? options_.make_call_id() : std::string("call_0");
  head_.clear();
  ++calls_;
  truncated_ = false;
  args_ = ArgsConverter{};
  state_ = State::kCallArgs;
  (void)sink;
  return true;
}

void OutputStream::args_text(std::string_view text, EventSink& sink) {
  const size_t used = args_.text(text);
  drain_args(sink);
  if (args_.done()) {
    state_ = State::kAfterArgs;
    on_text(text.substr(used), sink);
  }
}

void OutputStream::drain_args(EventSink& sink) {
  const std::string json = args_.take();
  if (!json.empty()) sink.tool_call(calls_ - 1, call_id_, call_name_, json);
}

void OutputStream::end_call(EventSink& sink) {
  if (state_ == State::kCallArgs) {
    args_.close();
    drain_args(sink);
  }
  state_ = State::kContent;
}

}  // namespace seatrt::parsers::gemma4
