// The BPE model of a Hugging Face tokenizer.json: vocabulary, merges by
// rank, byte fallback and unknown handling.  Encodes one pre-tokenized word.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "string_hash.hpp"

namespace seatrt::text {

struct BpeOptions {
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;
  std::string unk_token;  // "" when none
};

class BpeModel {
 public:
  // `vocab` maps token text -> id; `merges` are (left, right) texts in rank order.
  BpeModel(StringMap<int32_t> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options);

  // Appends the ids of one word (normalized, pre-tokenized) to `out`.
  // O(n log n) in the word's length: a heap of candidate merges over a linked
  // list of symbols, so 256K-character words are fine.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  const StringMap<int32_t>& vocab() const { return vocab_; }
  int32_t byte_token(unsigned char b) const { return byte_ids_[b]; }

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  const Merge* find_merge(int32_t a, int32_t b) const;
  void build_merge_table(const std::unordered_map<uint64_t, Merge>& merges);

  StringMap<int32_t> vocab_;
  // Merges by (left id, right id): an open-addressing table (linear probing,
  // power-of-two size) because this lookup is the encoder's hot path.
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge{};
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  std::vector<Slot> merge_table_;
  uint64_t merge_mask_ = 0;
  BpeOptions options_;
  int32_t unk_id_ = -1;
  std::array<int32_t, 256> byte_ids_{};  // -1 where the vocabulary lacks <0xNN>
};

}  // namespace seatrt::text
