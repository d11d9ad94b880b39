// What the operations with a per-sequence state (conv1d_causal, delta_rule)
// share: the batch's sequences (query_start), the state row each reads and
// writes (state_index) and whether it starts from zeros (reset), checked
// once.
#pragma once

#include <cstdint>
#include <vector>

#include "seatrt/seatrt.h"

namespace seatrt::cpu {

struct StateBatch {
  std::vector<int64_t> start;  // [S + 1]: sequence s owns rows [start[s], start[s+1])
  std::vector<int64_t> slot;   // [S]: its state row
  std::vector<char> reset;     // [S]: 1 = zeros instead of the stored state
  int64_t seqs() const { return static_cast<int64_t>(slot.size()); }
};

// Checks and reads the three tensors for `num_seqs` sequences over `tokens`
// rows and a state of `num_slots` rows: query_start I32 [S + 1] non-
// decreasing inside 0..tokens; state_index I32 [S] inside 0..num_slots, no
// row twice (two sequences writing one state would depend on order); reset
// I32 [S] or NULL.  Throws naming `op` and the argument.
StateBatch read_state_batch(const char* op, int32_t num_seqs, int64_t tokens, int64_t num_slots,
                            const seatrt_tensor* query_start, const seatrt_tensor* state_index,
                            const seatrt_tensor* reset);

}  // namespace seatrt::cpu
