// Refusing a checkpoint whose floating-point tensors hold NaN or infinity.
// A corrupt norm gain, router, scale or embedding row otherwise loads
// silently and fails later, at the first step that reads it, with an error
// that names a kernel instead of the tensor (or, for an embedding row, only
// for prompts holding that token).  Every BF16, F16, F32 and F8_E4M3 tensor
// of the checkpoint is scanned once at load; integer tensors (packed FP4
// codes) have no non-finite values to find.
#pragma once

#include <cstdint>

#include "seatrt/model/checkpoint.hpp"

namespace seatrt::model {

// Index of the first NaN or infinity in `t` (an E4M3 NaN for F8_E4M3), or -1;
// -1 as well for a dtype that cannot hold one.
int64_t first_non_finite(const TensorEntry& t);

// Throws StatusError (SEATRT_ERR_INVALID_ARG) naming the shard, the tensor
// and the element of the first non-finite value in `checkpoint`.
void check_finite(const Checkpoint& checkpoint);

}  // namespace seatrt::model
