// One group's KV blocks: a free list, reference counts, and a prefix cache
// of full blocks keyed by a hash chain (hash of the previous block's hash
// and this block's tokens; the tokens are kept to rule out collisions).
// A freed block that carries a hash stays cached (evictable, least recently
// freed first) until its memory is needed.  Not thread-safe: the engine
// owns it from one thread.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace seatrt::engine {

using BlockId = int32_t;

// The chain hash of a block of tokens following `parent` (0 for the first).
uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens);

class BlockPool {
 public:
  explicit BlockPool(int64_t num_blocks);

  int64_t num_blocks() const { return static_cast<int64_t>(refcount_.size()); }
  // Blocks that can be handed out now (free + cached but unreferenced).
  int64_t num_available() const {
    return static_cast<int64_t>(free_.size() + evictable_.size());
  }
  // Blocks referenced by at least one sequence.
  int64_t num_used() const { return num_blocks() - num_available(); }
  int64_t num_cached() const { return static_cast<int64_t>(by_hash_.size()); }

  // A block with refcount 1, or nullopt when none is available.  Takes a
  // never-hashed block first, else evicts the least recently freed cached one.
  std::optional<BlockId> allocate();
  // Drops one reference; at zero the block becomes available (staying cached
  // if it has a hash).
  void release(BlockId block);
  // The cached block holding exactly `tokens` under `hash`, with one more
  // reference, or nullopt.
  std::optional<BlockId> acquire_cached(uint64_t hash, std::span<const int32_t> tokens);
  // True if a block for `hash` + `tokens` is cached (no reference taken).
  bool is_cached(uint64_t hash, std::span<const int32_t> tokens) const;
  // Registers a full block (refcount > 0) under its chain hash.  If another
  // block already holds that hash, nothing changes.
  void commit(BlockId block, uint64_t hash, std::span<const int32_t> tokens);

  int32_t refcount(BlockId block) const { return refcount_.at(static_cast<size_t>(block)); }

 private:
  struct Cached {
    uint64_t hash = 0;
    std::vector<int32_t> tokens;
    std::optional<std::list<BlockId>::iterator> lru;  // set while refcount == 0
  };
  void check(BlockId block) const;

  std::vector<int32_t> refcount_;
  std::vector<BlockId> free_;
  std::list<BlockId> evictable_;  // front = least recently freed
  std::unordered_map<BlockId, Cached> cached_;
  std::unordered_map<uint64_t, BlockId> by_hash_;
};

}  // namespace seatrt::engine
