// Linear weights as the CPU provider reads them: DENSE row-major and NVFP4
// in the compressed-tensors layout, decoded one output row at a time to fp32
// (w = fp4 * (scale / global_scale), per group of 16 along `in`).
#pragma once

#include <cstdint>

#include "seatrt/seatrt.h"

namespace seatrt::cpu {

// Writes the `in_features` fp32 weights of output row `row` into dst.
// The weight must have passed validate_weight.
void decode_weight_row(const seatrt_linear_weight& w, int64_t row, float* dst);

// y[m * y_stride + (n - n_begin)] = x[m] . W[n] for n in [n_begin, n_end),
// m in [0, rows).  x is rows x in_features contiguous fp32; wrow is scratch of
// in_features floats.  Sums in fp32 in a fixed order.
void linear_block(const seatrt_linear_weight& w, const float* x, int64_t rows, int64_t n_begin,
                  int64_t n_end, float* y, int64_t y_stride, float* wrow);

// The fp32 dot product used by every matrix op (8 partial sums, fixed order).
float dot(const float* a, const float* b, int64_t n);

}  // namespace seatrt::cpu
