#include "seatrt/text/detokenizer.hpp"

#include <algorithm>

#include "utf8.hpp"

namespace seatrt::text {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}

std::string StreamingDetokenizer::flush_run() {
  std::string out;
  if (utf8::is_valid(run_)) {
    out = std::move(run_);
  } else {
    for (size_t i = 0; i < run_.size(); ++i) out += utf8::kReplacement;
  }
  run_.clear();
  return out;
}

std::string StreamingDetokenizer::push(int32_t id) {
  if (id < 0 || id >= tokenizer_.vocab_size()) return {};  // decode() skips unknown ids too
  if (skip_special_ && tokenizer_.is_special(id)) return {};
  if (tokenizer_.is_byte_token(id)) {
    run_ += tokenizer_.token_bytes(id);
    return {};
  }
  std::string out = run_.empty() ? std::string() : flush_run();
  out += tokenizer_.token_bytes(id);
  return out;
}

std::string StreamingDetokenizer::finish() { return flush_run(); }

std::string_view StreamingDetokenizer::held_complete_text() const {
  return utf8::is_valid(run_) ? std::string_view(run_) : std::string_view();
}

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

StopStringMatcher::Result StopStringMatcher::push(std::string_view delta) {
  Result result;
  if (stopped_) return result;
  held_ += delta;
  // The earliest stop in the text wins; on a tie, the first listed.
  size_t best = std::string::npos;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t at = held_.find(stops_[i]);
    if (at < best) {
      best = at;
      result.stop_index = static_cast<int>(i);
    }
  }
  if (best != std::string::npos) {
    result.text = held_.substr(0, best);
    held_.clear();
    stopped_ = true;
    return result;
  }
  // Hold the longest suffix that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const auto& stop : stops_) {
    for (size_t n = std::min(stop.size() - 1, held_.size()); n > hold; --n) {
      if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
        hold = n;
        break;
      }
    }
  }
  result.text = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return result;
}

bool StopStringMatcher::would_stop(std::string_view delta) const {
  if (stopped_ || delta.empty()) return false;
  const std::string text = held_ + std::string(delta);
  for (const auto& stop : stops_)
    if (text.find(stop) != std::string::npos) return true;
  return false;
}

std::string StopStringMatcher::finish() {
  std::string out = stopped_ ? std::string() : std::move(held_);
  held_.clear();
  return out;
}

}  // namespace seatrt::text
