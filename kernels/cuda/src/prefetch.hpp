// prefetch_weights (ABI 1.6): byte ranges of weights asked of L2 ahead of
// the kernels that read them (k_prefetch.cu).
#pragma once

#include <cstdint>

#include "launch.hpp"

namespace seatrt::cuda {

constexpr int kPrefetchMaxRanges = 16;

struct PrefetchRanges {
  const char* begin[kPrefetchMaxRanges] = {};
  const char* end[kPrefetchMaxRanges] = {};
  int32_t count = 0;
};

// One launch (PDL): blocks over the ranges in 1 MB chunks, each lane asks
// for a 32 KB piece (cp.async.bulk.prefetch.L2, the range rounded inward to
// 16 bytes); the kernel then waits for the one before it, so a kernel that
// waits for this one also knows its predecessors are done.
int launch_prefetch(Stream s, const PrefetchRanges& r);

}  // namespace seatrt::cuda
