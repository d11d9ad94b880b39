#include "bpe_model.hpp"

#include <cstdio>
#include <queue>

#include "seatrt/text/tokenizer.hpp"
#include "utf8.hpp"

namespace seatrt::text {

BpeModel::BpeModel(StringMap<int32_t> vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  std::unordered_map<uint64_t, Merge> by_pair;
  by_pair.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto a = vocab_.find(left);
    const auto b = vocab_.find(right);
    const auto r = vocab_.find(left + right);
    if (a == vocab_.end() || b == vocab_.end())
      throw TokenizerError("BPE merge #" + std::to_string(rank) + " ('" + left + "', '" + right +
                           "') uses a token missing from the vocabulary");
    if (r == vocab_.end())
      throw TokenizerError("BPE merge #" + std::to_string(rank) + " ('" + left + "', '" + right +
                           "') makes a token missing from the vocabulary");
    // The first (lowest-rank) occurrence of a pair wins, as in tokenizers.
    by_pair.try_emplace(pair_key(a->second, b->second), Merge{static_cast<int32_t>(rank), r->second});
  }
  build_merge_table(by_pair);
  if (!options_.unk_token.empty()) {
    const auto u = vocab_.find(options_.unk_token);
    if (u == vocab_.end())
      throw TokenizerError("BPE unk_token '" + options_.unk_token + "' is not in the vocabulary");
    unk_id_ = u->second;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const auto it = vocab_.find(std::string_view(name));
    byte_ids_[static_cast<size_t>(b)] = it == vocab_.end() ? -1 : it->second;
  }
}

namespace {
uint64_t mix(uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> 17; }
}  // namespace

void BpeModel::build_merge_table(const std::unordered_map<uint64_t, Merge>& merges) {
  size_t size = 16;
  while (size < merges.size() * 2) size *= 2;  // load factor <= 1/2
  merge_table_.assign(size, Slot{});
  merge_mask_ = size - 1;
  for (const auto& [key, merge] : merges) {
    uint64_t i = mix(key) & merge_mask_;
    while (merge_table_[i].key != kEmpty) i = (i + 1) & merge_mask_;
    merge_table_[i] = Slot{key, merge};
  }
}

const BpeModel::Merge* BpeModel::find_merge(int32_t a, int32_t b) const {
  const uint64_t key = pair_key(a, b);
  for (uint64_t i = mix(key) & merge_mask_;; i = (i + 1) & merge_mask_) {
    const Slot& slot = merge_table_[i];
    if (slot.key == key) return &slot.merge;
    if (slot.key == kEmpty) return nullptr;
  }
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (const auto it = vocab_.find(word); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  // Initial symbols: one per character; a character missing from the
  // vocabulary becomes its bytes (byte fallback) or <unk>.
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    bool alive;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  bool last_was_unk = false;
  auto push = [&](int32_t id) {
    const auto n = static_cast<int32_t>(symbols.size());
    symbols.push_back(Symbol{id, n - 1, n + 1, true});
  };
  for (size_t i = 0; i < word.size();) {
    size_t len = utf8::sequence_length(static_cast<unsigned char>(word[i]));
    if (i + len > word.size()) len = word.size() - i;
    const std::string_view ch = word.substr(i, len);
    i += len;
    if (const auto it = vocab_.find(ch); it != vocab_.end()) {
      push(it->second);
      last_was_unk = false;
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (const char c : ch) all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        for (const char c : ch) push(byte_ids_[static_cast<unsigned char>(c)]);
        last_was_unk = false;
        continue;
      }
    }
    if (unk_id_ < 0)
      throw TokenizerError("a character is not in the vocabulary and the BPE model has no unk_token");
    if (!(options_.fuse_unk && last_was_unk)) push(unk_id_);
    last_was_unk = true;
  }
  if (!symbols.empty()) symbols.back().next = -1;

  // Candidate merges ordered by (rank, position), lowest first.
  struct Candidate {
    int32_t rank;
    int32_t pos;
    int32_t result;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const Merge* m = find_merge(symbols[i].id, symbols[i + 1].id))
      queue.push(Candidate{m->rank, static_cast<int32_t>(i), m->result});
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<size_t>(top.pos)];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[static_cast<size_t>(left.next)];
    const Merge* m = find_merge(left.id, right.id);
    if (m == nullptr || m->result != top.result) continue;  // stale candidate
    left.id = top.result;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) symbols[static_cast<size_t>(left.next)].prev = top.pos;
    if (left.prev >= 0) {
      if (const Merge* p = find_merge(symbols[static_cast<size_t>(left.prev)].id, left.id))
        queue.push(Candidate{p->rank, left.prev, p->result});
    }
    if (left.next >= 0) {
      if (const Merge* n = find_merge(left.id, symbols[static_cast<size_t>(left.next)].id))
        queue.push(Candidate{n->rank, top.pos, n->result});
    }
  }
  for (int32_t i = 0; i >= 0 && i < static_cast<int32_t>(symbols.size());
       i = symbols[static_cast<size_t>(i)].next)
    out.push_back(symbols[static_cast<size_t>(i)].id);
}

}  // namespace seatrt::text
