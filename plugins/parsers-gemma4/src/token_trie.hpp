// The vocabulary as a trie of token bytes, built once per vocabulary and
// shared read-only by every parser that constrains decoding over it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "seatrt/parser.h"

namespace seatrt::parsers::gemma4 {

struct TokenTrie {
  struct Node {
    uint32_t first_edge = 0;
    uint32_t edge_count = 0;
    uint32_t first_token = 0;
    uint32_t token_count = 0;
  };
  int32_t vocab_size = 0;
  size_t max_token_bytes = 0;
  std::vector<Node> nodes;              // nodes[0] is the root (empty prefix)
  std::vector<uint8_t> edge_byte;       // edges of a node are contiguous
  std::vector<uint32_t> edge_child;
  std::vector<int32_t> tokens;          // ids of the ordinary tokens ending at a node
  struct Special {
    int32_t id;
    std::string bytes;
  };
  std::vector<Special> specials;        // special tokens (not stop tokens)
  std::vector<int32_t> stop_ids;        // <turn|>, <eos>, <|tool_response> when present
};

// Builds the trie of `vocab`.
std::shared_ptr<const TokenTrie> build_token_trie(const seatrt_vocab& vocab);

// The shared trie for `vocab`: built on first use and cached (keyed by a
// fingerprint of the vocabulary's contents, so a vocabulary that is freed and
// another allocated at the same address never reuses a stale trie).
std::shared_ptr<const TokenTrie> shared_token_trie(const seatrt_vocab& vocab);

}  // namespace seatrt::parsers::gemma4
