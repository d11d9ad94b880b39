#include "token_trie.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <string_view>
#include <utility>

#include "markers.hpp"
#include "utf8.hpp"

namespace seatrt::parsers::gemma4 {
namespace {

std::string_view bytes_of(const seatrt_vocab& vocab, int32_t id) {
  const char* data = nullptr;
  size_t len = 0;
  vocab.token_bytes(&vocab, id, &data, &len);
  return data ? std::string_view(data, len) : std::string_view();
}

// A cheap identity of a vocabulary: its size and a sample of ~1500 tokens
// (both ends and an even spread), so a request does not hash the whole
// vocabulary to find the cached trie.
uint64_t fingerprint(const seatrt_vocab& vocab) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  const auto mix = [&](uint8_t b) {
    h ^= b;
    h *= 1099511628211ull;
  };
  const auto mix_token = [&](int32_t id) {
    for (char c : bytes_of(vocab, id)) mix(static_cast<uint8_t>(c));
    mix(vocab.is_special(&vocab, id) ? 0xFE : 0xFF);
  };
  const int32_t n = vocab.size;
  const int32_t stride = std::max<int32_t>(1, n / 1024);
  for (int32_t id = 0; id < std::min<int32_t>(n, 256); ++id) mix_token(id);
  for (int32_t id = 0; id < n; id += stride) mix_token(id);
  for (int32_t id = std::max<int32_t>(0, n - 256); id < n; ++id) mix_token(id);
  return h ^ static_cast<uint64_t>(n);
}

}  // namespace

namespace {

using Entry = std::pair<std::string_view, int32_t>;

// `entries` sorted by bytes.  Each node covers a range of entries sharing its
// prefix; its children are laid out contiguously.
Trie build_trie(const std::vector<Entry>& entries) {
  Trie trie;
  struct Pending {
    uint32_t node, lo, hi, depth;
  };
  trie.nodes.emplace_back();
  std::vector<Pending> work{{0, 0, static_cast<uint32_t>(entries.size()), 0}};
  while (!work.empty()) {
    const Pending p = work.back();
    work.pop_back();
    uint32_t i = p.lo;
    trie.nodes[p.node].first_token = static_cast<uint32_t>(trie.tokens.size());
    while (i < p.hi && entries[i].first.size() == p.depth) trie.tokens.push_back(entries[i++].second);
    trie.nodes[p.node].token_count = static_cast<uint32_t>(trie.tokens.size()) - trie.nodes[p.node].first_token;
    trie.nodes[p.node].first_edge = static_cast<uint32_t>(trie.edge_byte.size());
    while (i < p.hi) {
      const auto b = static_cast<uint8_t>(entries[i].first[p.depth]);
      uint32_t j = i;
      while (j < p.hi && static_cast<uint8_t>(entries[j].first[p.depth]) == b) ++j;
      const auto child = static_cast<uint32_t>(trie.nodes.size());
      trie.nodes.emplace_back();
      trie.edge_byte.push_back(b);
      trie.edge_child.push_back(child);
      work.push_back({child, i, j, p.depth + 1});
      i = j;
    }
    trie.nodes[p.node].edge_count = static_cast<uint32_t>(trie.edge_byte.size()) - trie.nodes[p.node].first_edge;
  }
  for (const Entry& e : entries) trie.max_token_bytes = std::max(trie.max_token_bytes, e.first.size());
  return trie;
}

bool plain_for(std::string_view bytes, bool json) {
  for (size_t i = 0; i < bytes.size();) {
    const int n = utf8_sequence_length(bytes.substr(i));
    if (n <= 0) return false;
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '<') return false;
    if (json && (c == '"' || c == '\\' || c < 0x20)) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

PlainTokens build_plain(const std::vector<Entry>& ordinary, int32_t vocab_size, bool json) {
  PlainTokens out;
  out.bitmask.assign((static_cast<size_t>(vocab_size) + 31) / 32, 0u);
  std::vector<Entry> others;
  for (const Entry& e : ordinary) {
    if (plain_for(e.first, json)) {
      out.bitmask[static_cast<size_t>(e.second) / 32] |= 1u << (static_cast<uint32_t>(e.second) % 32);
      out.by_length.emplace_back(static_cast<uint32_t>(e.first.size()), e.second);
      out.max_bytes = std::max(out.max_bytes, e.first.size());
    } else {
      others.push_back(e);
    }
  }
  std::sort(out.by_length.begin(), out.by_length.end());
  out.others = build_trie(others);
  return out;
}

}  // namespace

std::shared_ptr<const TokenTrie> build_token_trie(const seatrt_vocab& vocab) {
  auto trie = std::make_shared<TokenTrie>();
  trie->vocab_size = vocab.size;
  std::vector<int32_t> stops;
  for (std::string_view text : kStopTokenTexts) {
    const int32_t id = vocab.token_id(&vocab, std::string(text).c_str());
    if (id >= 0 && id < vocab.size) stops.push_back(id);
  }
  trie->stop_ids = stops;
  std::vector<Entry> ordinary;
  for (int32_t id = 0; id < vocab.size; ++id) {
    const std::string_view bytes = bytes_of(vocab, id);
    if (bytes.empty() || std::count(stops.begin(), stops.end(), id)) continue;
    if (vocab.is_special(&vocab, id)) {
      trie->specials.push_back({id, std::string(bytes)});
    } else {
      ordinary.emplace_back(bytes, id);
    }
  }
  std::sort(ordinary.begin(), ordinary.end());
  trie->all = build_trie(ordinary);
  trie->native_body = build_plain(ordinary, vocab.size, false);
  trie->json_body = build_plain(ordinary, vocab.size, true);
  return trie;
}

std::shared_ptr<const TokenTrie> shared_token_trie(const seatrt_vocab& vocab) {
  // The cache holds immutable tries only; the mutex guards the list itself.
  static std::mutex mutex;
  static std::vector<std::pair<uint64_t, std::shared_ptr<const TokenTrie>>> cache;
  constexpr size_t kCapacity = 4;
  const uint64_t key = fingerprint(vocab);
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, trie] : cache) {
      if (k == key && trie->vocab_size == vocab.size) return trie;
    }
  }
  auto trie = build_token_trie(vocab);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kCapacity) cache.erase(cache.begin());
  cache.emplace_back(key, trie);
  return trie;
}

}  // namespace seatrt::parsers::gemma4
