// Constrained decoding: the grammar's state for one output, advanced by the
// tokens the host samples, and the mask of the tokens that may come next (a
// token is allowed iff its bytes keep the output a prefix of some string of
// the grammar; stop tokens iff the output may end there).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "grammar.hpp"
#include "matcher.hpp"
#include "token_trie.hpp"

namespace seatrt::parsers::gemma4 {

class ConstrainedDecoder {
 public:
  ConstrainedDecoder(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
                     const seatrt_vocab& vocab);

  // Advances by the sampled token `id`.  False when the token breaks the
  // grammar (the host ignored the mask): the decoder is then off for good.
  bool accept_token(int32_t id);
  // Writes the allowed-token bitmask (`words` 32-bit words).
  void allowed(uint32_t* mask, size_t words) const;
  bool active() const { return active_; }
  bool can_end() const { return active_ && state_.can_end(); }

 private:
  void walk(const Trie& trie, uint32_t node, const Matcher& state, uint32_t* mask, size_t words,
            std::vector<Matcher>& stack, size_t depth) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  const seatrt_vocab* vocab_;
  Matcher state_;
  bool active_ = true;
};

}  // namespace seatrt::parsers::gemma4
