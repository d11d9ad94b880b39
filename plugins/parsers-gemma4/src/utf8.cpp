#include "utf8.hpp"

namespace seatrt::parsers::gemma4 {
namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
}

int utf8_sequence_length(std::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return 1;
  int need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (int i = 1; i <= need; ++i) {
    if (static_cast<size_t>(i) >= s.size()) return -1;
    const auto b = static_cast<unsigned char>(s[static_cast<size_t>(i)]);
    const unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
    if (b < l || b > h) return 0;
  }
  return need + 1;
}

std::string Utf8Sanitizer::push(std::string_view bytes) {
  tail_.append(bytes);
  std::string out;
  out.reserve(tail_.size());
  size_t i = 0;
  while (i < tail_.size()) {
    const int n = utf8_sequence_length(std::string_view(tail_).substr(i));
    if (n < 0) break;  // incomplete: wait for more bytes
    if (n == 0) {
      out.append(kReplacement);
      ++i;
    } else {
      out.append(tail_, i, static_cast<size_t>(n));
      i += static_cast<size_t>(n);
    }
  }
  tail_.erase(0, i);
  return out;
}

std::string Utf8Sanitizer::flush() {
  std::string out = tail_.empty() ? std::string() : std::string(kReplacement);
  tail_.clear();
  return out;
}

}  // namespace seatrt::parsers::gemma4
