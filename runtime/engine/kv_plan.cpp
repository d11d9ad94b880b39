#include "kv_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace seatrt::engine {

int kv_dtype_bytes(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::fp8: return 1;
    case KvDtype::bf16: return 2;
    case KvDtype::fp32: return 4;
  }
  return 4;
}

KvDtype parse_kv_dtype(const std::string& name) {
  if (name == "fp8" || name == "fp8_e4m3") return KvDtype::fp8;
  if (name == "bf16" || name == "bfloat16") return KvDtype::bf16;
  if (name == "fp32" || name == "float32") return KvDtype::fp32;
  throw std::invalid_argument("kv_cache_dtype '" + name + "' is not one of: fp8, bf16, fp32");
}

const char* kv_dtype_name(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::fp8: return "fp8";
    case KvDtype::bf16: return "bf16";
    case KvDtype::fp32: return "fp32";
  }
  return "fp32";
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

uint64_t layer_bytes_per_token(const KvLayerSpec& layer, KvDtype dtype) {
  const uint64_t tensors = layer.single_tensor ? 1 : 2;
  return tensors * static_cast<uint64_t>(layer.kv_heads) * static_cast<uint64_t>(layer.head_dim) *
         static_cast<uint64_t>(kv_dtype_bytes(dtype));
}

void check_input(const KvPlanInput& in) {
  if (in.layers.empty()) throw std::invalid_argument("the architecture reported no KV layers");
  if (in.block_size <= 0) throw std::invalid_argument("KV block_size must be positive");
  if (in.max_model_len <= 0) throw std::invalid_argument("max_model_len must be positive");
  if (in.max_num_seqs <= 0) throw std::invalid_argument("max_num_seqs must be positive");
  for (size_t i = 0; i < in.layers.size(); ++i) {
    const auto& l = in.layers[i];
    if (l.kv_heads <= 0 || l.head_dim <= 0 || l.window < 0)
      throw std::invalid_argument("KV layer " + std::to_string(i) + " has kv_heads " +
                                  std::to_string(l.kv_heads) + ", head_dim " +
                                  std::to_string(l.head_dim) + ", window " +
                                  std::to_string(l.window) + " (expected positive sizes)");
  }
}

// Groups without block counts.
void build_groups(const KvPlanInput& in, KvPlan& plan) {
  plan.block_size = in.block_size;
  plan.dtype = in.dtype;
  plan.max_model_len = in.max_model_len;
  for (size_t i = 0; i < in.layers.size(); ++i) {
    const auto& l = in.layers[i];
    auto& group = l.window == 0 ? plan.full : plan.windowed;
    if (!group) group = KvGroup{};
    group->window = std::max(group->window, l.window);
    group->layers.push_back(static_cast<int32_t>(i));
    group->bytes_per_token += layer_bytes_per_token(l, in.dtype);
  }
  for (auto* g : {&plan.full, &plan.windowed})
    if (*g) (*g)->bytes_per_block = (*g)->bytes_per_token * static_cast<uint64_t>(in.block_size);
}

std::string gb(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

int64_t windowed_blocks_needed(const KvPlanInput& in, int32_t window) {
  const int64_t per_seq = ceil_div(std::max<int64_t>(window - 1, 0), in.block_size) + 2;
  const int64_t step = ceil_div(std::max<int64_t>(in.max_num_batched_tokens, 1), in.block_size);
  return static_cast<int64_t>(in.max_num_seqs) * per_seq + step;
}

KvPlan plan_kv_pool(const KvPlanInput& in, uint64_t pool_bytes) {
  check_input(in);
  KvPlan plan;
  build_groups(in, plan);
  uint64_t windowed_bytes = 0;
  if (plan.windowed) {
    plan.windowed->num_blocks = windowed_blocks_needed(in, plan.windowed->window);
    windowed_bytes = static_cast<uint64_t>(plan.windowed->num_blocks) * plan.windowed->bytes_per_block;
  }
  const int64_t min_full_blocks = ceil_div(in.max_model_len, in.block_size);
  const uint64_t min_full_bytes =
      plan.full ? static_cast<uint64_t>(min_full_blocks) * plan.full->bytes_per_block : 0;
  if (pool_bytes < windowed_bytes + min_full_bytes) {
    throw std::invalid_argument(
        "kv_cache_memory " + std::to_string(pool_bytes) + " bytes is too small: this seat needs at least " +
        std::to_string(windowed_bytes + min_full_bytes) + " bytes (" +
        std::to_string(windowed_bytes) + " for the sliding-window layers of " +
        std::to_string(in.max_num_seqs) + " sequences + " + std::to_string(min_full_bytes) +
        " for one max_model_len=" + std::to_string(in.max_model_len) +
        " sequence); raise kv_cache_memory or lower max_num_seqs / max_model_len");
  }
  if (plan.full) {
    plan.full->num_blocks = static_cast<int64_t>((pool_bytes - windowed_bytes) / plan.full->bytes_per_block);
    plan.capacity_tokens = plan.full->num_blocks * in.block_size;
    plan.pool_bytes = windowed_bytes + static_cast<uint64_t>(plan.full->num_blocks) * plan.full->bytes_per_block;
  } else {
    // Only windowed layers: every sequence fits whatever its length.
    plan.capacity_tokens = static_cast<int64_t>(in.max_num_seqs) * in.max_model_len;
    plan.pool_bytes = windowed_bytes;
  }
  plan.context_multiple = static_cast<double>(plan.capacity_tokens) / static_cast<double>(in.max_model_len);
  return plan;
}

uint64_t kv_bytes_for_context_multiple(const KvPlanInput& in, double multiple) {
  check_input(in);
  if (!(multiple > 0) || !std::isfinite(multiple))
    throw std::invalid_argument("kv_cache_max_context_multiple must be a positive number");
  KvPlan plan;
  build_groups(in, plan);
  uint64_t bytes = 0;
  if (plan.windowed)
    bytes += static_cast<uint64_t>(windowed_blocks_needed(in, plan.windowed->window)) *
             plan.windowed->bytes_per_block;
  if (plan.full) {
    const auto tokens = static_cast<int64_t>(std::ceil(multiple * static_cast<double>(in.max_model_len)));
    bytes += static_cast<uint64_t>(ceil_div(tokens, in.block_size)) * plan.full->bytes_per_block;
  }
  return bytes;
}

std::string describe(const KvPlan& plan) {
  char head[128];
  std::snprintf(head, sizeof head, "KV pool %lld tokens, %.2f\xC3\x97 max context",
                static_cast<long long>(plan.capacity_tokens), plan.context_multiple);
  std::string out = head;
  out += " (" + std::to_string(plan.pool_bytes) + " bytes = " + gb(plan.pool_bytes) + ", " +
         kv_dtype_name(plan.dtype) + ", block " + std::to_string(plan.block_size);
  if (plan.full)
    out += "; full layers " + std::to_string(plan.full->layers.size()) + " x " +
           std::to_string(plan.full->num_blocks) + " blocks at " +
           std::to_string(plan.full->bytes_per_token) + " B/token";
  if (plan.windowed)
    out += "; window-" + std::to_string(plan.windowed->window) + " layers " +
           std::to_string(plan.windowed->layers.size()) + " x " +
           std::to_string(plan.windowed->num_blocks) + " blocks at " +
           std::to_string(plan.windowed->bytes_per_token) + " B/token";
  return out + ")";
}

}  // namespace seatrt::engine
