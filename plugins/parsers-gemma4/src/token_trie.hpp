// The vocabulary prepared for mask computation, built once per vocabulary
// and shared read-only by every parser that constrains decoding over it:
// tries of token bytes, and for the hot case (inside a string or thought
// body, where nearly every token is allowed) the "plain" tokens precomputed
// as a bitmask so that only the others need a trie walk.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seatrt/parser.h"

namespace seatrt::parsers::gemma4 {

struct Trie {
  struct Node {
    uint32_t first_edge = 0;
    uint32_t edge_count = 0;
    uint32_t first_token = 0;
    uint32_t token_count = 0;
  };
  std::vector<Node> nodes;         // nodes[0] is the root (empty prefix)
  std::vector<uint8_t> edge_byte;  // edges of a node are contiguous
  std::vector<uint32_t> edge_child;
  std::vector<int32_t> tokens;     // ids of the tokens ending at a node
  size_t max_token_bytes = 0;
};

// Tokens a string body always accepts whatever they follow (valid, complete
// UTF-8 with no '<', so no control-token text can form; for JSON also no
// '"', '\\' or control character), as long as they fit in the bytes left.
struct PlainTokens {
  std::vector<uint32_t> bitmask;                    // all of them
  std::vector<std::pair<uint32_t, int32_t>> by_length;  // (bytes, id), shortest first
  size_t max_bytes = 0;
  Trie others;                                      // every other ordinary token
};

struct TokenTrie {
  int32_t vocab_size = 0;
  Trie all;  // every ordinary (non-special) token
  PlainTokens native_body;
  PlainTokens json_body;
  struct Special {
    int32_t id;
    std::string bytes;
  };
  std::vector<Special> specials;  // special tokens (not stop tokens)
  std::vector<int32_t> stop_ids;  // <turn|>, <eos>, <|tool_response> when present
};

// Builds the prepared vocabulary of `vocab`.
std::shared_ptr<const TokenTrie> build_token_trie(const seatrt_vocab& vocab);

// The shared one for `vocab`: built on first use and cached (keyed by a
// fingerprint of the vocabulary's contents, so a vocabulary that is freed and
// another allocated at the same address never reuses a stale entry).
std::shared_ptr<const TokenTrie> shared_token_trie(const seatrt_vocab& vocab);

}  // namespace seatrt::parsers::gemma4
