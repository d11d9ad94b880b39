// The decode attention path (k_attention.cu): one query row per sequence,
// one block per (sequence, KV head, key split) serving every q head of that
// KV head, so the paged cache is read once per group.  Plain structs only,
// like launch.hpp, so host code needs no CUDA include.
#pragma once

#include "launch.hpp"

namespace seatrt::cuda {

// Whether the decode kernel takes these shapes: every sequence has one query
// row (max_query_len 1, T == num_seqs), an F8_E4M3 or BF16 cache, head dim
// 128/256/512 and 1, 2, 4 or 8 q heads per KV head.  Other batches keep the
// general kernel (launch_attention).
bool attention_decode_supported(const AttentionProblem& p, int32_t max_query_len);
// Key splits for these shapes: enough blocks to fill the GPU at batch 1, from
// host values only (max_seq_len may be padded; the kernel reads each
// sequence's true length on the device and idle splits return at once).
int attention_decode_splits(const AttentionProblem& p, int32_t max_seq_len);
size_t attention_decode_workspace_bytes(const AttentionProblem& p, int splits);
int launch_attention_decode(Stream s, const AttentionProblem& p, int splits, float* workspace);

}  // namespace seatrt::cuda
