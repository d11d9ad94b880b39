#include "seatrt/model/finite_check.hpp"

#include <cstring>
#include <string>

#include "seatrt/model/dtype.hpp"
#include "seatrt/model/status.hpp"

namespace seatrt::model {

namespace {

// `lane` repeated over a 64-bit word of Bits-sized lanes.
template <class Bits>
constexpr uint64_t replicate(uint64_t lane) {
  uint64_t word = 0;
  for (unsigned i = 0; i < 8 / sizeof(Bits); ++i) word |= lane << (8 * sizeof(Bits) * i);
  return word;
}

// The first element whose bits under `mask` (its exponent field) are all
// ones: NaN or infinity.  Chunks are first tested 8 bytes at a time (a lane
// of (w & mask) ^ mask is zero exactly where the exponent is all ones, and
// (v - 1) & ~v & high finds a zero lane); only a chunk with a hit is
// searched element by element.  ~4 GB/s on one core.
template <class Bits>
int64_t first_with_all_ones(const unsigned char* data, uint64_t count, Bits mask) {
  constexpr uint64_t kChunk = 4096;  // elements
  constexpr uint64_t kOne = replicate<Bits>(1);
  constexpr uint64_t kHigh = replicate<Bits>(uint64_t{1} << (8 * sizeof(Bits) - 1));
  const uint64_t m = replicate<Bits>(mask);
  const auto element = [&](const unsigned char* p, uint64_t i) {
    Bits b;
    std::memcpy(&b, p + i * sizeof(Bits), sizeof(Bits));
    return (b & mask) == mask;
  };
  for (uint64_t base = 0; base < count; base += kChunk) {
    const uint64_t n = count - base < kChunk ? count - base : kChunk;
    const unsigned char* p = data + base * sizeof(Bits);
    const uint64_t words = n * sizeof(Bits) / 8;
    uint64_t zero_lanes = 0;
    for (uint64_t i = 0; i < words; ++i) {
      uint64_t w;
      std::memcpy(&w, p + 8 * i, 8);
      const uint64_t v = (w & m) ^ m;
      zero_lanes |= (v - kOne) & ~v & kHigh;
    }
    bool hit = zero_lanes != 0;
    for (uint64_t i = words * 8 / sizeof(Bits); i < n && !hit; ++i) hit = element(p, i);
    if (!hit) continue;
    for (uint64_t i = 0; i < n; ++i)
      if (element(p, i)) return static_cast<int64_t>(base + i);
  }
  return -1;
}

}  // namespace

int64_t first_non_finite(const TensorEntry& t) {
  switch (t.dtype) {
    case SEATRT_DTYPE_BF16: return first_with_all_ones<uint16_t>(t.data, t.nbytes / 2, 0x7F80u);
    case SEATRT_DTYPE_F16: return first_with_all_ones<uint16_t>(t.data, t.nbytes / 2, 0x7C00u);
    case SEATRT_DTYPE_F32: return first_with_all_ones<uint32_t>(t.data, t.nbytes / 4, 0x7F800000u);
    // E4M3FN has no infinities; its NaN is S.1111.111.
    case SEATRT_DTYPE_F8_E4M3: return first_with_all_ones<uint8_t>(t.data, t.nbytes, 0x7Fu);
    default: return -1;
  }
}

void check_finite(const Checkpoint& checkpoint) {
  for (const TensorEntry* t : checkpoint.tensors()) {
    const int64_t at = first_non_finite(*t);
    if (at < 0) continue;
    throw StatusError(SEATRT_ERR_INVALID_ARG,
                      checkpoint.dir().string() + ": tensor '" + t->name + "' (" + dtype_name(t->dtype) +
                          ") holds a non-finite value (NaN or infinity) at element " + std::to_string(at) +
                          ": the checkpoint is corrupt");
  }
}

}  // namespace seatrt::model
