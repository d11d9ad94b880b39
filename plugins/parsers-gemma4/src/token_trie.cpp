#include "token_trie.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <string_view>
#include <utility>

#include "markers.hpp"

namespace seatrt::parsers::gemma4 {
namespace {

std::string_view bytes_of(const seatrt_vocab& vocab, int32_t id) {
  const char* data = nullptr;
  size_t len = 0;
  vocab.token_bytes(&vocab, id, &data, &len);
  return data ? std::string_view(data, len) : std::string_view();
}

uint64_t fingerprint(const seatrt_vocab& vocab) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  const auto mix = [&](uint8_t b) {
    h ^= b;
    h *= 1099511628211ull;
  };
  for (int32_t id = 0; id < vocab.size; ++id) {
    for (char c : bytes_of(vocab, id)) mix(static_cast<uint8_t>(c));
    mix(vocab.is_special(&vocab, id) ? 0xFE : 0xFF);
  }
  return h ^ static_cast<uint64_t>(vocab.size);
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
  std::vector<std::pair<std::string_view, int32_t>> ordinary;
  for (int32_t id = 0; id < vocab.size; ++id) {
    const std::string_view bytes = bytes_of(vocab, id);
    if (bytes.empty() || std::count(stops.begin(), stops.end(), id)) continue;
    if (vocab.is_special(&vocab, id)) {
      trie->specials.push_back({id, std::string(bytes)});
    } else {
      ordinary.emplace_back(bytes, id);
      trie->max_token_bytes = std::max(trie->max_token_bytes, bytes.size());
    }
  }
  std::sort(ordinary.begin(), ordinary.end());
  // Each node covers a range of the sorted tokens sharing its prefix; its
  // children are laid out contiguously, so the walk is cache-friendly.
  struct Pending {
    uint32_t node, lo, hi, depth;
  };
  trie->nodes.emplace_back();
  std::vector<Pending> work{{0, 0, static_cast<uint32_t>(ordinary.size()), 0}};
  while (!work.empty()) {
    const Pending p = work.back();
    work.pop_back();
    uint32_t i = p.lo;
    trie->nodes[p.node].first_token = static_cast<uint32_t>(trie->tokens.size());
    while (i < p.hi && ordinary[i].first.size() == p.depth) trie->tokens.push_back(ordinary[i++].second);
    trie->nodes[p.node].token_count = static_cast<uint32_t>(trie->tokens.size()) - trie->nodes[p.node].first_token;
    trie->nodes[p.node].first_edge = static_cast<uint32_t>(trie->edge_byte.size());
    while (i < p.hi) {
      const auto b = static_cast<uint8_t>(ordinary[i].first[p.depth]);
      uint32_t j = i;
      while (j < p.hi && static_cast<uint8_t>(ordinary[j].first[p.depth]) == b) ++j;
      const auto child = static_cast<uint32_t>(trie->nodes.size());
      trie->nodes.emplace_back();
      trie->edge_byte.push_back(b);
      trie->edge_child.push_back(child);
      work.push_back({child, i, j, p.depth + 1});
      i = j;
    }
    trie->nodes[p.node].edge_count = static_cast<uint32_t>(trie->edge_byte.size()) - trie->nodes[p.node].first_edge;
  }
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
