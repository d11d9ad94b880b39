#include "args_converter.hpp"

#include "json_text.hpp"

namespace seatrt::parsers::gemma4 {
namespace {

constexpr size_t kMaxDepth = 64;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

ArgsConverter::Phase& ArgsConverter::phase() { return frames_.back().phase; }

std::string ArgsConverter::take() {
  std::string out;
  out.swap(out_);
  return out;
}

size_t ArgsConverter::text(std::string_view text) {
  size_t used = 0;
  while (used < text.size() && !done_) {
    const char c = text[used];
    switch (mode_) {
      case Mode::kStructure:
        structure_char(c);
        break;
      case Mode::kKey:
        if (c == ':') {
          emit_key();
        } else if (c == '}' || c == ',') {  // a key without a value: dropped
          buffer_.clear();
          mode_ = Mode::kStructure;
          if (c == '}') close_top();
        } else {
          buffer_ += c;
        }
        break;
      case Mode::kQuotedKey:
        buffer_ += c;
        break;
      case Mode::kString: {
        // Copy the whole run of string text at once.
        append_json_escaped(out_, text.substr(used));
        used = text.size();
        continue;
      }
      case Mode::kBare:
        if (c == ',' || c == '}' || c == ']') {
          end_bare();
          structure_char(c);
        } else {
          buffer_ += c;
        }
        break;
    }
    ++used;
  }
  return used;
}

void ArgsConverter::delimiter() {
  if (done_) return;
  switch (mode_) {
    case Mode::kString:
      out_ += '"';
      mode_ = Mode::kStructure;
      value_done();
      return;
    case Mode::kQuotedKey:  // <|"|>key<|"|> (vllm#44715): ':' comes next
      mode_ = Mode::kStructure;
      phase() = Phase::kObjColon;
      return;
    case Mode::kBare:  // junk after a bare value
      end_bare();
      return;
    case Mode::kKey:  // a delimiter inside a bare key: ignored
      return;
    case Mode::kStructure:
      break;
  }
  if (frames_.empty()) return;  // before '{': ignored
  const Phase p = phase();
  if (p == Phase::kObjKey) {
    buffer_.clear();
    mode_ = Mode::kQuotedKey;
  } else if (p == Phase::kObjValue || p == Phase::kArrValue) {
    begin_element();
    out_ += '"';
    mode_ = Mode::kString;
  }
  // Elsewhere (after a value, before ':') a delimiter is junk: skipped.
}

void ArgsConverter::structure_char(char c) {
  if (frames_.empty()) {
    if (c == '{' && !started_) {
      started_ = true;
      open(true);
    }
    return;  // anything before '{' is ignored
  }
  if (is_space(c)) return;
  switch (phase()) {
    case Phase::kStart:
      return;
    case Phase::kObjKey:
      if (c == '}') {
        close_top();
      } else if (c == ':') {
        emit_key();  // empty key
      } else if (c != ',') {
        buffer_.assign(1, c);
        mode_ = Mode::kKey;
      }
      return;
    case Phase::kObjColon:
      if (c == ':') {
        emit_key();
      } else if (c == '}') {
        buffer_.clear();
        close_top();
      }
      return;
    case Phase::kObjValue:
    case Phase::kArrValue: {
      const bool in_object = phase() == Phase::kObjValue;
      if ((c == '{' || c == '[') && frames_.size() < kMaxDepth) {
        begin_element();
        open(c == '{');
      } else if (c == '}' || c == ',') {
        if (in_object) {  // a key with no value: null
          begin_element();
          out_ += "null";
          value_done();
          structure_char(c);
        }  // in an array: an empty element or a stray '}' is skipped
      } else if (c == ']') {
        if (in_object) {
          begin_element();
          out_ += "null";
          value_done();
        } else {
          close_top();
        }
      } else {
        buffer_.assign(1, c);
        mode_ = Mode::kBare;
      }
      return;
    }
    case Phase::kObjAfter:
      if (c == ',') {
        frames_.back().pending_comma = true;
        phase() = Phase::kObjKey;
      } else if (c == '}') {
        close_top();
      }
      return;
    case Phase::kArrAfter:
      if (c == ',') {
        frames_.back().pending_comma = true;
        phase() = Phase::kArrValue;
      } else if (c == ']') {
        close_top();
      }
      return;
  }
}

void ArgsConverter::begin_element() {
  Frame& f = frames_.back();
  if (f.pending_comma) out_ += ", ";
  f.pending_comma = false;
}

void ArgsConverter::open(bool is_object) {
  // The parent's value is this container: once it closes, the parent is
  // after a value (and an early close() must not write a null for it).
  if (!frames_.empty()) value_done();
  out_ += is_object ? '{' : '[';
  frames_.push_back({is_object, is_object ? Phase::kObjKey : Phase::kArrValue, false});
}

void ArgsConverter::close_top() {
  out_ += frames_.back().is_object ? '}' : ']';
  frames_.pop_back();
  if (frames_.empty()) {
    done_ = true;
  } else {
    value_done();
  }
}

void ArgsConverter::value_done() {
  phase() = frames_.back().is_object ? Phase::kObjAfter : Phase::kArrAfter;
}

void ArgsConverter::emit_key() {
  begin_element();
  out_ += '"';
  append_json_escaped(out_, trim(buffer_));
  out_ += "\": ";
  buffer_.clear();
  mode_ = Mode::kStructure;
  phase() = Phase::kObjValue;
}

void ArgsConverter::end_bare() {
  const std::string_view value = trim(buffer_);
  begin_element();
  out_ += value.empty() ? std::string("null") : bare_value_to_json(value);
  buffer_.clear();
  mode_ = Mode::kStructure;
  value_done();
}

void ArgsConverter::close() {
  if (done_) return;
  if (!started_) {
    out_ += "{}";
    started_ = done_ = true;
    return;
  }
  switch (mode_) {
    case Mode::kString:
      out_ += '"';
      mode_ = Mode::kStructure;
      value_done();
      break;
    case Mode::kBare:
      end_bare();
      break;
    case Mode::kKey:
    case Mode::kQuotedKey:
      buffer_.clear();
      mode_ = Mode::kStructure;
      break;
    case Mode::kStructure:
      break;
  }
  while (!frames_.empty()) {
    if (phase() == Phase::kObjValue || phase() == Phase::kObjColon) {
      if (phase() == Phase::kObjValue) {
        out_ += "null";  // the key was already sent
      }
      value_done();
    }
    out_ += frames_.back().is_object ? '}' : ']';
    frames_.pop_back();
  }
  done_ = true;
}

}  // namespace seatrt::parsers::gemma4
