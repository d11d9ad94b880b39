// The opt-in BF16 prefill of the CUDA provider ([kernels.options]
// prefill_bf16 = true, README.md): F32 activations of prefill-shaped calls
// are rounded to BF16 in scratch memory so linear, moe and attention take
// their tensor-core kernels, which read BF16 only.  Outputs keep the
// caller's dtype.  Plain structs only (launch.hpp): no CUDA include.
#pragma once

#include <cstddef>

#include "launch.hpp"

namespace seatrt::cuda {

// When the option is on, an F32 activation is rounded only where the BF16
// copy reaches a tensor-core kernel: linear x with more than this many rows
// (k_linear.cu's kTensorCoreRows), moe x with at least kMoeGroupedMinTokens
// tokens, attention q when the longest query run has at least
// kAttentionPrefillMinRows rows (prefill.hpp).  Decode-shaped calls stay F32.
constexpr int64_t kLinearTensorCoreRows = 64;

// Bytes of a contiguous BF16 copy of `v`, rounded up to 256 so a workspace
// placed after it in the same scratch block stays aligned.
size_t bf16_copy_bytes(const View3& v);

// The contiguous BF16 view [d0, d1, d2] that launch_to_bf16 writes at `dst`.
View3 bf16_copy_view(const View3& src, void* dst);

// Writes the F32 `src` to `dst` as contiguous BF16, rounding to nearest even.
int launch_to_bf16(Stream s, const View3& src, void* dst);

// Writes the F32 [rows, cols] `src` to `dst` as three contiguous BF16 planes
// (hi, mid, lo: exact), x_planes_bytes(src) bytes (launch.hpp).
int launch_to_planes(Stream s, const Mat& src, void* dst, int planes = 3);

// out[r, c] = the sum over p < planes of partials[p * out.rows + r, c] (F32,
// contiguous rows of out.cols), in plane order: the products of x's planes
// (launch_to_planes) put back together.
int launch_sum_planes(Stream s, const float* partials, int planes, const Mat& out);

// A 2-D view as the 3-D view [rows, 1, cols].
View3 view3_of(const Mat& m);

}  // namespace seatrt::cuda
