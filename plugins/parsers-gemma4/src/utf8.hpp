// UTF-8 helpers: the parser only ever emits whole, valid UTF-8 sequences.
#pragma once

#include <string>
#include <string_view>

namespace seatrt::parsers::gemma4 {

// Holds back an incomplete UTF-8 sequence at the end of a byte stream and
// replaces invalid bytes with U+FFFD, so what comes out is valid UTF-8.
class Utf8Sanitizer {
 public:
  // Appends `bytes`; returns the valid text that is now complete.
  std::string push(std::string_view bytes);
  // Ends the stream: an incomplete tail becomes U+FFFD.
  std::string flush();

 private:
  std::string tail_;
};

// Length of the valid UTF-8 sequence starting at s[0], 0 if invalid, or -1 if
// s is a valid but incomplete prefix of a sequence.
int utf8_sequence_length(std::string_view s);

}  // namespace seatrt::parsers::gemma4
