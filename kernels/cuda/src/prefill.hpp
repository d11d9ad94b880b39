// Launchers of the prefill-shaped (many rows) paths that are not in
// launch.hpp: the grouped tensor-core MoE.  Plain structs only, like
// launch.hpp, so host code needs no CUDA include.
#pragma once

#include "launch.hpp"

namespace seatrt::cuda {

// The fewest tokens for which moe() takes the grouped tensor-core path
// (BF16 activations): below it the skinny-M kernel reads each expert's
// weights once per 8 tokens at little cost.
constexpr int64_t kMoeGroupedMinTokens = 64;

// MoE on the tensor cores: group the assignments by expert on the device,
// one grouped GEMM over all experts' row tiles for gate+up (GELU-tanh * up
// in the epilogue, BF16 h), one for down (router weight in the epilogue,
// fp32 per-assignment rows), then a fixed-order sum over each token's k
// rows.  x must be BF16; `workspace` must hold moe_grouped_workspace_bytes.
// `fast_weights`: every expert weight is FP4 with an even count of 4-byte
// aligned scales per row (the kernels' lean path; see moe_fast_weights).
size_t moe_grouped_workspace_bytes(const MoeProblem& p);
int launch_moe_grouped(Stream s, const MoeProblem& p, void* workspace, bool fast_weights);
bool moe_fast_weights(const WeightRef* host_refs, size_t count);

// Prefill attention on the tensor cores (k_attention_prefill.cu, which
// hands head dims 256/512 to k_attention_prefill_wgmma.cu): BF16 q, head
// dim 128/256/512, F8_E4M3 or BF16 caches, batches whose longest query run
// has at least kAttentionPrefillMinRows rows (decode batches keep the
// split-KV CUDA-core kernel).  `workspace` holds the row-tile list.
constexpr int32_t kAttentionPrefillMinRows = 64;
bool attention_prefill_supported(const AttentionProblem& p, int32_t max_query_len);
size_t attention_prefill_workspace_bytes(const AttentionProblem& p);
int launch_attention_prefill(Stream s, const AttentionProblem& p, void* workspace);

}  // namespace seatrt::cuda
