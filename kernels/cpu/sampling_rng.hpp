// The sampler's random draw: u = top 53 bits of the (step + 1)-th output of
// SplitMix64 seeded with `seed`, as a double in [0, 1).  Fully determined by
// (seed, step), so a request replays identically on any provider that uses
// the same rule (kernels/cpu/README.md documents it for other providers).
#pragma once

#include <cstdint>

namespace seatrt::cpu {

inline uint64_t splitmix64_output(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline double uniform_draw(uint64_t seed, uint64_t step) {
  return static_cast<double>(splitmix64_output(seed, step) >> 11) * 0x1.0p-53;
}

}  // namespace seatrt::cpu
