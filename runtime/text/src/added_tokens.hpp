// Added tokens (specials such as <|turn>) are found in the raw text before
// normalization and BPE, as Hugging Face tokenizers does: leftmost-longest
// match, honouring each token's lstrip / rstrip / single_word flags.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seatrt::text {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;       // absorb whitespace on the left
  bool rstrip = false;       // absorb whitespace on the right
  bool single_word = false;  // only match as a whole word
  bool normalized = false;   // matched in the normalized text instead of the raw text
};

// A piece of input: either an added token (id >= 0) or text for the model.
struct Segment {
  std::string_view text;
  int32_t added_id = -1;
};

class AddedTokenMatcher {
 public:
  explicit AddedTokenMatcher(const std::vector<AddedToken>& tokens);

  // Splits `text` into segments; consecutive text stays one segment.
  std::vector<Segment> split(std::string_view text) const;

 private:
  struct Node {
    int32_t token = -1;  // index into tokens_ when a token ends here
    std::vector<std::pair<unsigned char, int32_t>> children;
  };
  int32_t child(int32_t node, unsigned char c) const;
  // Longest token starting at text[pos], as an index into tokens_, or -1.
  int32_t longest_at(std::string_view text, size_t pos, size_t& length) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> trie_;
  bool first_byte_[256] = {};
};

}  // namespace seatrt::text
