#include "memory_plan.hpp"

#include <cstdio>
#include <stdexcept>

namespace seatrt::engine {

std::string bytes_and_gib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(bytes),
                static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}


std::string MemoryPlan::describe() const {
  std::string s = "memory plan: weights " + bytes_and_gib(weight_bytes) + " + KV pool " + bytes_and_gib(kv_bytes) +
                  " + workspace " + bytes_and_gib(workspace_bytes + staging_bytes);
  if (provider_workspace_bytes || free_after_reserve_bytes)
    s += " + kernel provider workspace " + bytes_and_gib(provider_workspace_bytes);
  s += " = " + bytes_and_gib(total_bytes()) + "; device free after weights: " + bytes_and_gib(free_bytes);
  if (provider_workspace_bytes || free_after_reserve_bytes) s += ", after all: " + bytes_and_gib(free_after_reserve_bytes);
  return s;
}

void check_memory_plan(const MemoryPlan& plan) {
  if (plan.fits()) return;
  throw std::runtime_error("the seat does not fit on the device: it still needs " + bytes_and_gib(plan.still_needed()) +
                           " (KV pool " + bytes_and_gib(plan.kv_bytes) + " + step buffers " + bytes_and_gib(plan.staging_bytes) +
                           ") but only " + bytes_and_gib(plan.free_bytes) +
                           " are free; lower [cache] kv_cache_memory (or kv_cache_max_context_multiple), "
                           "[scheduler] max_num_seqs or [model] max_model_len, or free the device");
}

}  // namespace seatrt::engine
