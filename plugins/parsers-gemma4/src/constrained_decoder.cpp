#include "constrained_decoder.hpp"

#include <algorithm>
#include <string_view>

namespace seatrt::parsers::gemma4 {
namespace {

void set_bit(uint32_t* mask, size_t words, int32_t id) {
  const auto word = static_cast<size_t>(id) / 32;
  if (id >= 0 && word < words) mask[word] |= 1u << (static_cast<uint32_t>(id) % 32);
}

}  // namespace

ConstrainedDecoder::ConstrainedDecoder(std::shared_ptr<const Grammar> grammar,
                                       std::shared_ptr<const TokenTrie> trie, const seatrt_vocab& vocab)
    : grammar_(std::move(grammar)), trie_(std::move(trie)), vocab_(&vocab), state_(*grammar_) {}

bool ConstrainedDecoder::accept_token(int32_t id) {
  if (!active_) return false;
  if (std::count(trie_->stop_ids.begin(), trie_->stop_ids.end(), id)) return true;
  if (id < 0 || id >= vocab_->size) {
    active_ = false;
    return false;
  }
  const char* data = nullptr;
  size_t len = 0;
  vocab_->token_bytes(vocab_, id, &data, &len);
  const bool special = vocab_->is_special(vocab_, id) != 0;
  Matcher next(state_);
  for (size_t i = 0; i < len; ++i) {
    if (!next.step(static_cast<uint8_t>(data[i]), special)) {
      active_ = false;
      return false;
    }
  }
  state_ = next;
  return true;
}

void ConstrainedDecoder::allowed(uint32_t* mask, size_t words) const {
  std::fill(mask, mask + words, 0u);
  Matcher::PlainBody body{};
  const Trie* rest = &trie_->all;
  if (state_.plain_body(&body)) {
    // The hot case: most of the vocabulary is plain text, allowed at once.
    const PlainTokens& plain = body.json ? trie_->json_body : trie_->native_body;
    if (body.remaining >= plain.max_bytes) {
      std::copy_n(plain.bitmask.begin(), std::min(words, plain.bitmask.size()), mask);
    } else {
      for (const auto& [len, id] : plain.by_length) {
        if (len > body.remaining) break;
        set_bit(mask, words, id);
      }
    }
    rest = &plain.others;
  }
  std::vector<Matcher> stack(rest->max_token_bytes + 2, state_);
  walk(*rest, 0, state_, mask, words, stack, 0);
  for (const TokenTrie::Special& s : trie_->specials) {
    Matcher m(state_);
    bool ok = true;
    for (char c : s.bytes) {
      if (!m.step(static_cast<uint8_t>(c), true)) {
        ok = false;
        break;
      }
    }
    if (ok) set_bit(mask, words, s.id);
  }
  if (state_.can_end()) {
    for (int32_t id : trie_->stop_ids) set_bit(mask, words, id);
  }
}

void ConstrainedDecoder::walk(const Trie& trie, uint32_t node_id, const Matcher& state, uint32_t* mask,
                              size_t words, std::vector<Matcher>& stack, size_t depth) const {
  // One copy of the state per trie level (sized up front, never reallocated),
  // reused across siblings.
  const Trie::Node& node = trie.nodes[node_id];
  for (uint32_t e = node.first_edge; e < node.first_edge + node.edge_count; ++e) {
    Matcher& next = stack[depth + 1];
    next.assign(state);
    if (!next.step(trie.edge_byte[e], false)) continue;
    const Trie::Node& child = trie.nodes[trie.edge_child[e]];
    for (uint32_t t = child.first_token; t < child.first_token + child.token_count; ++t) {
      set_bit(mask, words, trie.tokens[t]);
    }
    walk(trie, trie.edge_child[e], next, mask, words, stack, depth + 1);
  }
}

}  // namespace seatrt::parsers::gemma4
