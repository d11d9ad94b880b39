// Streaming detokenization: text deltas per generated token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seatrt/text/tokenizer.hpp"

namespace seatrt::text {

// push(id) returns the text that is now certain.  A run of byte-fallback
// tokens is held until it ends (the next non-byte token, or finish()),
// because the reference decoder judges a whole run at once: valid UTF-8 is
// emitted as is, an invalid run becomes one U+FFFD per byte.  So the
// concatenation of every push() and finish() equals
// tokenizer.decode(all ids, skip_special_tokens), and no delta ever splits a
// code point.  Skipped special tokens do not end a byte run (the reference
// filters them out before decoding), kept ones do.
class StreamingDetokenizer {
 public:
  StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens);

  std::string push(int32_t id);
  std::string finish();
  // The held byte run when it already spells whole characters (valid
  // UTF-8), else empty: what finish() would return now.  A stop string it
  // completes can end the output here, where finish() equals the decode.
  std::string_view held_complete_text() const;

 private:
  std::string flush_run();

  const Tokenizer& tokenizer_;
  bool skip_special_;
  std::string run_;  // pending bytes of byte-fallback tokens
};

// Finds stop strings in streamed text, including ones that span deltas,
// without ever emitting text at or past a stop.  The text that could still
// be the start of a stop string is held back until it resolves.
class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops);

  struct Result {
    std::string text;     // safe to emit now
    int stop_index = -1;  // index of the stop string found, else -1
  };
  // After a stop was found, further pushes return nothing.
  Result push(std::string_view delta);
  // End of output: releases the held-back text (no stop was found in it).
  std::string finish();
  // Whether push(delta) would find a stop (no state changes).
  bool would_stop(std::string_view delta) const;
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace seatrt::text
