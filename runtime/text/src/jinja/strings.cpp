#include "strings.hpp"

#include <stdexcept>

#include "../utf8.hpp"

namespace seatrt::text::jinja::py {

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(std::string_view s, bool left, bool right, const std::string* chars) {
  std::vector<char32_t> strip_set;
  if (chars != nullptr)
    for (size_t i = 0; i < chars->size();) strip_set.push_back(utf8::next_code_point(*chars, i));
  auto strippable = [&](char32_t c) {
    if (chars == nullptr) return is_space(c);
    for (const char32_t x : strip_set)
      if (x == c) return true;
    return false;
  };
  // Code point boundaries.
  std::vector<size_t> starts;
  std::vector<char32_t> cps;
  for (size_t i = 0; i < s.size();) {
    starts.push_back(i);
    cps.push_back(utf8::next_code_point(s, i));
  }
  starts.push_back(s.size());
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strippable(cps[b])) ++b;
  if (right)
    while (e > b && strippable(cps[e - 1])) --e;
  return std::string(s.substr(starts[b], starts[e] - starts[b]));
}

namespace {
// Simple case mapping: ASCII, Latin-1, Latin Extended-A pairs, Greek and Cyrillic.
char32_t to_upper(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c >= 0x100 && c <= 0x17F && (c & 1) && c != 0x131 && c != 0x149 && c != 0x17F) return c - 1;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}
char32_t to_lower(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c >= 0x100 && c <= 0x17F && !(c & 1) && c != 0x130 && c != 0x138) return c + 1;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}
bool is_cased_letter(char32_t c) { return to_upper(c) != c || to_lower(c) != c; }

template <typename F>
std::string map_chars(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) utf8::append_code_point(out, f(utf8::next_code_point(s, i)));
  return out;
}
}  // namespace

std::string upper(std::string_view s) { return map_chars(s, to_upper); }
std::string lower(std::string_view s) { return map_chars(s, to_lower); }

std::string title(std::string_view s) {
  bool previous_cased = false;
  return map_chars(s, [&](char32_t c) {
    const char32_t r = previous_cased ? to_lower(c) : to_upper(c);
    previous_cased = is_cased_letter(c);
    return r;
  });
}

std::string capitalize(std::string_view s) {
  bool first = true;
  return map_chars(s, [&](char32_t c) {
    const char32_t r = first ? to_upper(c) : to_lower(c);
    first = false;
    return r;
  });
}

std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep != nullptr) {
    if (sep->empty()) throw std::runtime_error("empty separator");
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      const size_t hit = s.find(*sep, pos);
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, hit - pos));
      pos = hit + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  size_t i = 0;
  auto skip_space = [&] {
    while (i < s.size()) {
      size_t j = i;
      if (!is_space(utf8::next_code_point(s, j))) break;
      i = j;
    }
  };
  skip_space();
  while (i < s.size()) {
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.emplace_back(strip(s.substr(i), false, true, nullptr));
      return out;
    }
    const size_t start = i;
    while (i < s.size()) {
      size_t j = i;
      if (is_space(utf8::next_code_point(s, j))) break;
      i = j;
    }
    out.emplace_back(s.substr(start, i - start));
    skip_space();
  }
  return out;
}

std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count) {
  std::string out;
  if (from.empty()) {  // Python inserts `to` between every character
    int64_t n = 0;
    size_t i = 0;
    while (true) {
      if (count < 0 || n < count) {
        out += to;
        ++n;
      }
      if (i >= s.size()) break;
      const size_t start = i;
      utf8::next_code_point(s, i);
      out += s.substr(start, i - start);
    }
    return out;
  }
  size_t pos = 0;
  int64_t n = 0;
  for (size_t hit; (count < 0 || n < count) && (hit = s.find(from, pos)) != std::string_view::npos; ++n) {
    out += s.substr(pos, hit - pos);
    out += to;
    pos = hit + from.size();
  }
  out += s.substr(pos);
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace seatrt::text::jinja::py
