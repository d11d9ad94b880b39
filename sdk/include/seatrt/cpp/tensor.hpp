// seatrt plugin SDK, C++ side: building seatrt_tensor descriptors (header
// only; not part of the ABI).  The host and every plugin describe buffers
// they own with the same few lines; this is the one copy.
#ifndef SEATRT_CPP_TENSOR_HPP
#define SEATRT_CPP_TENSOR_HPP

#include <cstdint>
#include <initializer_list>

#include "seatrt/tensor.h"

namespace seatrt::sdk {

// A row-major (contiguous) view of `data` with `shape` (at most
// SEATRT_MAX_DIMS dimensions; extra ones are ignored).  Borrows `data`: the
// descriptor owns nothing and is valid while the buffer is.
inline seatrt_tensor contiguous_tensor(void* data, int32_t dtype, std::initializer_list<int64_t> shape,
                                       int32_t device_kind, int32_t device_index = 0) {
  seatrt_tensor t{};
  t.struct_size = sizeof t;
  t.dtype = dtype;
  t.data = data;
  int32_t n = 0;
  for (int64_t d : shape) {
    if (n == SEATRT_MAX_DIMS) break;
    t.shape[n++] = d;
  }
  t.ndim = n;
  int64_t stride = 1;
  for (int32_t i = n - 1; i >= 0; --i) {
    t.strides[i] = stride;
    stride *= t.shape[i];
  }
  t.device.kind = device_kind;
  t.device.index = device_index;
  return t;
}

}  // namespace seatrt::sdk

#endif  // SEATRT_CPP_TENSOR_HPP
