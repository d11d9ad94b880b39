#include "batch_builder.hpp"

#include <algorithm>

namespace seatrt::engine {

StepBatch build_step_batch(const StepPlan& plan, int32_t block_size, bool has_full, bool has_window) {
  StepBatch b;
  b.num_seqs = static_cast<int32_t>(plan.chunks.size());
  size_t max_blocks = 1;
  for (const auto& c : plan.chunks)
    max_blocks = std::max({max_blocks, c.seq->full_blocks.size(), c.seq->window_blocks.size()});
  b.max_blocks = static_cast<int32_t>(max_blocks);
  b.query_start.push_back(0);
  if (has_full) b.block_tables.assign(plan.chunks.size() * max_blocks, -1);
  if (has_window) b.window_block_tables.assign(plan.chunks.size() * max_blocks, -1);
  for (size_t s = 0; s < plan.chunks.size(); ++s) {
    const auto& c = plan.chunks[s];
    const Sequence& seq = *c.seq;
    for (int64_t i = 0; i < c.count; ++i) {
      const int64_t pos = c.start + i;
      const auto block = static_cast<size_t>(pos / block_size);
      const int64_t offset = pos % block_size;
      b.token_ids.push_back(seq.tokens[static_cast<size_t>(pos)]);
      b.positions.push_back(static_cast<int32_t>(pos));
      if (has_full) b.slot_mapping.push_back(int64_t{seq.full_blocks[block]} * block_size + offset);
      if (has_window) b.window_slot_mapping.push_back(int64_t{seq.window_blocks[block]} * block_size + offset);
    }
    b.query_start.push_back(b.num_tokens());
    const auto seq_len = static_cast<int32_t>(c.start + c.count);
    b.seq_lens.push_back(seq_len);
    b.max_query_len = std::max(b.max_query_len, static_cast<int32_t>(c.count));
    b.max_seq_len = std::max(b.max_seq_len, seq_len);
    if (has_full) std::copy(seq.full_blocks.begin(), seq.full_blocks.end(), b.block_tables.begin() + static_cast<std::ptrdiff_t>(s * max_blocks));
    if (has_window) {
      // Blocks that slid out of the window are never read, but kernels may
      // validate every entry up to seq_len: give them a live block of the
      // same sequence (its K/V are finite) instead of -1.
      BlockId live = -1;
      for (BlockId id : seq.window_blocks)
        if (id >= 0) {
          live = id;
          break;
        }
      auto row = b.window_block_tables.begin() + static_cast<std::ptrdiff_t>(s * max_blocks);
      for (size_t i = 0; i < seq.window_blocks.size(); ++i) row[static_cast<std::ptrdiff_t>(i)] = seq.window_blocks[i] >= 0 ? seq.window_blocks[i] : live;
    }
    if (c.all_logits) {  // every position (prompt logprobs); the last also samples when it ends the sequence
      for (int64_t i = c.count; i > 0; --i) b.logits_index.push_back(b.num_tokens() - static_cast<int32_t>(i));
    } else if (c.needs_logits) {
      b.logits_index.push_back(b.num_tokens() - 1);
    }
  }
  return b;
}

}  // namespace seatrt::engine
