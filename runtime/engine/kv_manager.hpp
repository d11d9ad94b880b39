// Block tables of sequences over the two block pools of a KvPlan: prefix
// matching at admission, allocation ahead of each step (releasing window
// blocks that slid out), committing full blocks to the prefix cache, and
// freeing.  Not thread-safe: used by the engine thread.
#pragma once

#include <optional>

#include "block_pool.hpp"
#include "kv_plan.hpp"
#include "sequence.hpp"

namespace seatrt::engine {

class KvManager {
 public:
  // prefix_caching false: match_prefix never reuses cached blocks.
  explicit KvManager(const KvPlan& plan, bool prefix_caching = true);

  const KvPlan& plan() const { return plan_; }
  int32_t block_size() const { return plan_.block_size; }
  BlockPool* full_pool() { return full_ ? &*full_ : nullptr; }
  BlockPool* window_pool() { return window_ ? &*window_ : nullptr; }

  // Blocks referenced / total over both pools (what /metrics reports).
  int64_t blocks_used() const;
  int64_t blocks_total() const;

  // For a sequence with nothing computed: takes the longest cached prefix
  // (whole blocks, leaving at least one token to compute) whose full blocks
  // and in-window blocks are all cached.  Sets num_computed.
  void match_prefix(Sequence& seq);
  // Makes the block tables cover positions [num_computed, num_computed+n),
  // first releasing window blocks no longer needed.  False (nothing
  // allocated) when a pool is short.
  bool allocate(Sequence& seq, int64_t n);
  // Registers every block that became full (up to num_computed).
  void commit(Sequence& seq);
  // Releases all blocks of the sequence and resets its cache state.
  void free(Sequence& seq);

 private:
  void release_out_of_window(Sequence& seq);

  KvPlan plan_;
  bool prefix_caching_ = true;
  std::optional<BlockPool> full_;
  std::optional<BlockPool> window_;
};

}  // namespace seatrt::engine
