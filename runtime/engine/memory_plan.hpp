// The seat's device memory plan: weights + KV pool + activation/workspace
// buffers, checked against the free memory the kernel provider reports,
// then the provider's working memory, measured once the KV pool is placed.
// No utilization ratio: the seat takes exactly what its plan says.
#pragma once

#include <cstdint>
#include <string>

namespace seatrt::engine {

struct MemoryPlan {
  uint64_t weight_bytes = 0;     // already on the device when the plan is checked
  uint64_t workspace_bytes = 0;  // likewise
  uint64_t kv_bytes = 0;         // still to allocate
  uint64_t staging_bytes = 0;    // per-step input/logit buffers, still to allocate
  uint64_t free_bytes = 0;       // device free memory now
  // Measured after the KV pool, by the load-time reservation steps
  // (workspace_reserve.hpp); 0 when they did not run.
  uint64_t provider_workspace_bytes = 0;
  uint64_t free_after_reserve_bytes = 0;
  uint64_t total_bytes() const {
    return weight_bytes + workspace_bytes + kv_bytes + staging_bytes + provider_workspace_bytes;
  }
  uint64_t still_needed() const { return kv_bytes + staging_bytes; }
  bool fits() const { return still_needed() <= free_bytes; }
  std::string describe() const;
};

// "N bytes (X.XX GiB)", as the plan's messages write sizes.
std::string bytes_and_gib(uint64_t bytes);

// Throws std::runtime_error with both numbers (needed, free) and what to
// change when the plan does not fit.
void check_memory_plan(const MemoryPlan& plan);

}  // namespace seatrt::engine
