#include "state_batch.hpp"

#include <string>

#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

std::vector<int64_t> read_i32_vector(const char* op, const char* name, const seatrt_tensor* t, int64_t n) {
  const seatrt_tensor& d = need_tensor(t, op, name);
  need_ndim(d, op, name, 1);
  need_dtype(d, op, name, {SEATRT_DTYPE_I32});
  need_dim(d, op, name, 0, n);
  return read_indices(d, op, name);
}

}  // namespace

StateBatch read_state_batch(const char* op, int32_t num_seqs, int64_t tokens, int64_t num_slots,
                            const seatrt_tensor* query_start, const seatrt_tensor* state_index,
                            const seatrt_tensor* reset) {
  if (num_seqs < 0) invalid(op, "num_seqs " + std::to_string(num_seqs) + " is negative");
  StateBatch b;
  b.start = read_i32_vector(op, "query_start", query_start, int64_t{num_seqs} + 1);
  for (size_t s = 0; s < b.start.size(); ++s) {
    const int64_t lo = s == 0 ? 0 : b.start[s - 1];
    if (b.start[s] < lo || b.start[s] > tokens) {
      invalid(op, "query_start[" + std::to_string(s) + "] = " + std::to_string(b.start[s]) +
                      " is outside " + std::to_string(lo) + ".." + std::to_string(tokens));
    }
  }
  b.slot = read_i32_vector(op, "state_index", state_index, num_seqs);
  std::vector<char> used(static_cast<size_t>(num_slots), 0);
  for (size_t s = 0; s < b.slot.size(); ++s) {
    const int64_t r = b.slot[s];
    if (r < 0 || r >= num_slots) {
      invalid(op, "state_index[" + std::to_string(s) + "] = " + std::to_string(r) + " is outside the state's " +
                      std::to_string(num_slots) + " rows");
    }
    if (used[static_cast<size_t>(r)]) invalid(op, "state row " + std::to_string(r) + " is used by two sequences");
    used[static_cast<size_t>(r)] = 1;
  }
  b.reset.assign(static_cast<size_t>(num_seqs), 0);
  if (reset) {
    const std::vector<int64_t> flags = read_i32_vector(op, "reset", reset, num_seqs);
    for (size_t s = 0; s < flags.size(); ++s) b.reset[s] = flags[s] != 0;
  }
  return b;
}

}  // namespace seatrt::cpu
