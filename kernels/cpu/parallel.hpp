// Splits [0, count) into contiguous chunks for the pool, so that an item can
// set up per-chunk scratch memory once.  The split changes nothing in the
// results: every index is computed the same way whichever chunk it is in.
#pragma once

#include <algorithm>
#include <cstdint>

#include "thread_pool.hpp"

namespace seatrt::cpu {

template <typename Body>  // Body: void(int64_t begin, int64_t end)
void parallel_chunks(ThreadPool& pool, int64_t count, Body&& body) {
  if (count <= 0) return;
  const int64_t chunks = std::min<int64_t>(count, static_cast<int64_t>(pool.threads()) * 4);
  const int64_t per = (count + chunks - 1) / chunks;
  pool.parallel_for((count + per - 1) / per, [&](int64_t chunk) {
    const int64_t begin = chunk * per;
    body(begin, std::min(count, begin + per));
  });
}

}  // namespace seatrt::cpu
