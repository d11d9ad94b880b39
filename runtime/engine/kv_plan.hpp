// Sizing the paged KV pool in bytes from the architecture's per-layer specs.
//
// Layers fall into two groups that are paged separately out of one byte
// budget:
// - full-attention layers (window 0) grow with the sequence: they decide how
//   many tokens the pool holds;
// - sliding-window layers hold at most `window` tokens per sequence: their
//   blocks are recycled as the window slides, so their share is a fixed
//   reservation for max_num_seqs sequences plus one step's new tokens.
// Bytes per token are derived per layer (kv_heads * head_dim * element size,
// times two unless the layer stores one tensor for K and V); nothing assumes
// a constant bytes/token for the model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace seatrt::engine {

// fp32 stores K/V unrounded: four times fp8's bytes, for checking a seat
// against an fp32 reference, not for serving.
enum class KvDtype { fp8, bf16, fp32 };

// Bytes of one cache element: fp8 = 1, bf16 = 2, fp32 = 4.
int kv_dtype_bytes(KvDtype dtype);
// "fp8" / "bf16" / "fp32"; throws std::invalid_argument naming the value otherwise.
KvDtype parse_kv_dtype(const std::string& name);
const char* kv_dtype_name(KvDtype dtype);

struct KvLayerSpec {
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t window = 0;          // 0 = full attention
  bool single_tensor = false;  // K and V rebuilt from one cached tensor
};

struct KvPlanInput {
  std::vector<KvLayerSpec> layers;
  KvDtype dtype = KvDtype::bf16;
  int32_t block_size = 16;
  int64_t max_model_len = 0;
  int32_t max_num_seqs = 1;
  int64_t max_num_batched_tokens = 0;
};

// One group of layers paged with one block table.
struct KvGroup {
  int32_t window = 0;              // 0 for the full group; the largest window otherwise
  std::vector<int32_t> layers;     // layer indices
  uint64_t bytes_per_token = 0;    // summed over the group's layers
  uint64_t bytes_per_block = 0;
  int64_t num_blocks = 0;
};

struct KvPlan {
  int32_t block_size = 16;
  KvDtype dtype = KvDtype::bf16;
  std::optional<KvGroup> full;      // absent when every layer is windowed
  std::optional<KvGroup> windowed;  // absent when no layer is windowed
  uint64_t pool_bytes = 0;          // what the groups' blocks occupy
  int64_t capacity_tokens = 0;      // tokens the full layers can hold at once
  int64_t max_model_len = 0;
  double context_multiple = 0;      // capacity_tokens / max_model_len
};

// Blocks the windowed group needs for max_num_seqs sequences (each keeps
// window-1 past tokens plus its own partial blocks) plus one step's tokens.
int64_t windowed_blocks_needed(const KvPlanInput& input, int32_t window);

// Splits `pool_bytes` between the groups.  Throws std::invalid_argument with
// both numbers when the budget cannot hold the windowed reservation plus one
// max_model_len sequence on the full layers.
KvPlan plan_kv_pool(const KvPlanInput& input, uint64_t pool_bytes);

// The reverse: bytes for a pool holding `multiple` * max_model_len tokens.
uint64_t kv_bytes_for_context_multiple(const KvPlanInput& input, double multiple);

// "KV pool N tokens, X.XX× max context" (plus the byte split).
std::string describe(const KvPlan& plan);

}  // namespace seatrt::engine
