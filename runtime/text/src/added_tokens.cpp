#include "added_tokens.hpp"

#include <algorithm>

namespace seatrt::text {

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_word_char(char c) {
  // ASCII alphanumerics and '_', plus any non-ASCII byte (letters of other scripts).
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens) : tokens_(tokens) {
  trie_.emplace_back();
  for (size_t t = 0; t < tokens_.size(); ++t) {
    const std::string& s = tokens_[t].content;
    if (s.empty()) continue;
    first_byte_[static_cast<unsigned char>(s[0])] = true;
    int32_t node = 0;
    for (const char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      int32_t next = child(node, c);
      if (next < 0) {
        next = static_cast<int32_t>(trie_.size());
        trie_.emplace_back();
        trie_[static_cast<size_t>(node)].children.emplace_back(c, next);
      }
      node = next;
    }
    trie_[static_cast<size_t>(node)].token = static_cast<int32_t>(t);
  }
}

int32_t AddedTokenMatcher::child(int32_t node, unsigned char c) const {
  for (const auto& [k, v] : trie_[static_cast<size_t>(node)].children)
    if (k == c) return v;
  return -1;
}

int32_t AddedTokenMatcher::longest_at(std::string_view text, size_t pos, size_t& length) const {
  int32_t node = 0;
  int32_t best = -1;
  for (size_t i = pos; i < text.size(); ++i) {
    node = child(node, static_cast<unsigned char>(text[i]));
    if (node < 0) break;
    if (trie_[static_cast<size_t>(node)].token >= 0) {
      best = trie_[static_cast<size_t>(node)].token;
      length = i + 1 - pos;
    }
  }
  return best;
}

std::vector<Segment> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<Segment> out;
  size_t text_start = 0;  // start of the pending text segment
  size_t pos = 0;
  while (pos < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    size_t length = 0;
    const int32_t t = longest_at(text, pos, length);
    if (t < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[static_cast<size_t>(t)];
    size_t start = pos;
    size_t end = pos + length;
    if (token.single_word) {
      const bool left_ok = start == 0 || !is_word_char(text[start - 1]);
      const bool right_ok = end == text.size() || !is_word_char(text[end]);
      if (!left_ok || !right_ok) {
        ++pos;
        continue;
      }
    }
    if (token.lstrip)
      while (start > text_start && is_space(text[start - 1])) --start;
    if (token.rstrip)
      while (end < text.size() && is_space(text[end])) ++end;
    if (start > text_start) out.push_back(Segment{text.substr(text_start, start - text_start), -1});
    out.push_back(Segment{text.substr(start, end - start), token.id});
    pos = end;
    text_start = end;
  }
  if (text_start < text.size()) out.push_back(Segment{text.substr(text_start), -1});
  return out;
}

}  // namespace seatrt::text
