// Small UTF-8 helpers shared by the tokenizers, the detokenizer and Jinja.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace seatrt::text::utf8 {

// Length of the UTF-8 sequence that starts with lead byte `c` (1 for an
// invalid lead byte, so callers always make progress).
inline size_t sequence_length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}

// Whether `s` is entirely valid UTF-8 (no overlongs, surrogates or > U+10FFFF).
bool is_valid(std::string_view s);

// Length of the longest prefix of `s` that ends on a complete, valid
// sequence boundary if the rest is an incomplete (but so far valid) sequence;
// returns s.size() when `s` does not end inside a sequence.
size_t complete_prefix(std::string_view s);

// Decodes the code point at s[i] (which must be valid), advancing i.
char32_t next_code_point(std::string_view s, size_t& i);

void append_code_point(std::string& out, char32_t cp);

// Number of code points (Python len()); invalid bytes count one each.
size_t code_point_count(std::string_view s);

// The replacement character U+FFFD as UTF-8.
inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

}  // namespace seatrt::text::utf8
