#include "block_pool.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace seatrt::engine {

uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens) {
  // FNV-1a over the parent hash and the token ids, then a final mix
  // (splitmix64) so nearby inputs spread over the whole range.
  uint64_t h = 1469598103934665603ull ^ parent;
  auto mix_in = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (int32_t t : tokens) mix_in(static_cast<uint32_t>(t));
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

BlockPool::BlockPool(int64_t num_blocks) {
  if (num_blocks < 0) throw std::invalid_argument("negative block count");
  refcount_.assign(static_cast<size_t>(num_blocks), 0);
  free_.reserve(static_cast<size_t>(num_blocks));
  // Hand out low ids first (pop_back).
  for (int64_t i = num_blocks - 1; i >= 0; --i) free_.push_back(static_cast<BlockId>(i));
}

void BlockPool::check(BlockId block) const {
  if (block < 0 || static_cast<size_t>(block) >= refcount_.size())
    throw std::logic_error("block id " + std::to_string(block) + " out of range");
}

std::optional<BlockId> BlockPool::allocate() {
  BlockId block;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (!evictable_.empty()) {
    block = evictable_.front();
    evictable_.pop_front();
    auto it = cached_.find(block);
    by_hash_.erase(it->second.hash);
    cached_.erase(it);
  } else {
    return std::nullopt;
  }
  refcount_[static_cast<size_t>(block)] = 1;
  return block;
}

void BlockPool::release(BlockId block) {
  check(block);
  auto& rc = refcount_[static_cast<size_t>(block)];
  if (rc <= 0) throw std::logic_error("block " + std::to_string(block) + " released twice");
  if (--rc > 0) return;
  auto it = cached_.find(block);
  if (it == cached_.end()) {
    free_.push_back(block);
  } else {
    it->second.lru = evictable_.insert(evictable_.end(), block);
  }
}

bool BlockPool::is_cached(uint64_t hash, std::span<const int32_t> tokens) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return false;
  const auto& c = cached_.at(it->second);
  return std::equal(c.tokens.begin(), c.tokens.end(), tokens.begin(), tokens.end());
}

std::optional<BlockId> BlockPool::acquire_cached(uint64_t hash, std::span<const int32_t> tokens) {
  if (!is_cached(hash, tokens)) return std::nullopt;
  const BlockId block = by_hash_.at(hash);
  auto& c = cached_.at(block);
  if (c.lru) {
    evictable_.erase(*c.lru);
    c.lru.reset();
  }
  ++refcount_[static_cast<size_t>(block)];
  return block;
}

void BlockPool::commit(BlockId block, uint64_t hash, std::span<const int32_t> tokens) {
  check(block);
  if (refcount_[static_cast<size_t>(block)] <= 0)
    throw std::logic_error("commit of unreferenced block " + std::to_string(block));
  if (by_hash_.count(hash) || cached_.count(block)) return;
  by_hash_.emplace(hash, block);
  cached_.emplace(block, Cached{hash, std::vector<int32_t>(tokens.begin(), tokens.end()), std::nullopt});
}

}  // namespace seatrt::engine
