#include "kv_manager.hpp"

#include <algorithm>
#include <span>

namespace seatrt::engine {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

KvManager::KvManager(const KvPlan& plan, bool prefix_caching) : plan_(plan), prefix_caching_(prefix_caching) {
  if (plan_.full) full_.emplace(plan_.full->num_blocks);
  if (plan_.windowed) window_.emplace(plan_.windowed->num_blocks);
}

int64_t KvManager::blocks_used() const {
  return (full_ ? full_->num_used() : 0) + (window_ ? window_->num_used() : 0);
}
int64_t KvManager::blocks_total() const {
  return (full_ ? full_->num_blocks() : 0) + (window_ ? window_->num_blocks() : 0);
}

void KvManager::match_prefix(Sequence& seq) {
  if (!prefix_caching_) return;
  const int64_t bs = plan_.block_size;
  const int64_t len = static_cast<int64_t>(seq.tokens.size());
  const int64_t max_blocks = (len - 1) / bs;
  std::vector<uint64_t> hashes;
  auto tokens_of = [&](int64_t b) {
    return std::span<const int32_t>(seq.tokens.data() + b * bs, static_cast<size_t>(bs));
  };
  uint64_t parent = 0;
  for (int64_t b = 0; b < max_blocks; ++b) hashes.push_back(parent = block_hash(parent, tokens_of(b)));

  int64_t n = 0;
  if (full_) {
    while (n < max_blocks && full_->is_cached(hashes[static_cast<size_t>(n)], tokens_of(n))) ++n;
  } else {
    n = max_blocks;
  }
  auto first_window_block = [&](int64_t blocks) {
    const int64_t first_pos = blocks * bs - plan_.windowed->window + 1;
    return std::max<int64_t>(first_pos, 0) / bs;
  };
  if (window_) {
    for (; n > 0; --n) {
      bool all = true;
      for (int64_t b = first_window_block(n); b < n && all; ++b)
        all = window_->is_cached(hashes[static_cast<size_t>(b)], tokens_of(b));
      if (all) break;
    }
  }
  if (n == 0) return;
  for (int64_t b = 0; b < n; ++b) {
    const auto h = hashes[static_cast<size_t>(b)];
    if (full_) seq.full_blocks.push_back(*full_->acquire_cached(h, tokens_of(b)));
    if (window_) {
      seq.window_blocks.push_back(b >= first_window_block(n) ? *window_->acquire_cached(h, tokens_of(b))
                                                              : BlockId{-1});
    }
    seq.block_hashes.push_back(h);
  }
  seq.num_computed = n * bs;
  // What the cache gave at first scheduling: a preempted sequence finding
  // its own blocks again is no cache hit for the client (vLLM counts so too).
  if (seq.preemptions == 0) seq.cached_prompt_tokens = std::min<int64_t>(seq.num_computed, seq.prompt_len);
}

void KvManager::release_out_of_window(Sequence& seq) {
  if (!window_) return;
  // The next token (position num_computed) reads positions > pos - window.
  const int64_t first_needed = seq.num_computed - plan_.windowed->window + 1;
  if (first_needed <= 0) return;
  const int64_t last_droppable = first_needed / plan_.block_size;  // exclusive
  for (int64_t b = 0; b < last_droppable && b < static_cast<int64_t>(seq.window_blocks.size()); ++b) {
    auto& id = seq.window_blocks[static_cast<size_t>(b)];
    if (id >= 0) {
      window_->release(id);
      id = -1;
    }
  }
}

bool KvManager::allocate(Sequence& seq, int64_t n) {
  release_out_of_window(seq);
  const int64_t want = ceil_div(seq.num_computed + n, plan_.block_size);
  const int64_t full_need = full_ ? want - static_cast<int64_t>(seq.full_blocks.size()) : 0;
  const int64_t window_need = window_ ? want - static_cast<int64_t>(seq.window_blocks.size()) : 0;
  if (full_need > 0 && full_->num_available() < full_need) return false;
  if (window_need > 0 && window_->num_available() < window_need) return false;
  for (int64_t i = 0; i < full_need; ++i) seq.full_blocks.push_back(*full_->allocate());
  for (int64_t i = 0; i < window_need; ++i) seq.window_blocks.push_back(*window_->allocate());
  return true;
}

void KvManager::commit(Sequence& seq) {
  const int64_t bs = plan_.block_size;
  const int64_t complete = seq.num_computed / bs;
  uint64_t parent = seq.block_hashes.empty() ? 0 : seq.block_hashes.back();
  for (auto b = static_cast<int64_t>(seq.block_hashes.size()); b < complete; ++b) {
    std::span<const int32_t> toks(seq.tokens.data() + b * bs, static_cast<size_t>(bs));
    parent = block_hash(parent, toks);
    if (full_) full_->commit(seq.full_blocks[static_cast<size_t>(b)], parent, toks);
    if (window_ && seq.window_blocks[static_cast<size_t>(b)] >= 0)
      window_->commit(seq.window_blocks[static_cast<size_t>(b)], parent, toks);
    seq.block_hashes.push_back(parent);
  }
}

void KvManager::free(Sequence& seq) {
  for (auto id : seq.full_blocks) full_->release(id);
  for (auto id : seq.window_blocks)
    if (id >= 0) window_->release(id);
  seq.full_blocks.clear();
  seq.window_blocks.clear();
  seq.block_hashes.clear();
  seq.num_computed = 0;
}

}  // namespace seatrt::engine
