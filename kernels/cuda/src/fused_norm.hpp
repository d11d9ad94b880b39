// Launchers of the ABI 1.1 and 1.2 fused norms (k_fused_norm.cu), called by the
// argument checks in ops.cpp.  Same conventions as launch.hpp: plain views,
// work enqueued on `s`, the launch's cudaError_t returned as int.
#pragma once

#include <cstdint>

#include "launch.hpp"

namespace seatrt::cuda {

// An optional per-column gain: data NULL = none.
struct Gain {
  const void* data = nullptr;
  int32_t dtype = 0;
};

// residual <- (residual + rmsnorm(x) * x_gain) * scale; then, when out.data
// is non-NULL, out <- rmsnorm(residual) * out_gain.  One block per row.
int launch_add_rms_norm(Stream s, const Mat& x, Gain x_gain, const Mat& residual, float eps, float scale,
                        Gain out_gain, const Mat& out);

// out <- rope(rmsnorm(x) * gain) per (token, head) row of [T, heads, D].
// One block per row; the row is staged in shared memory, so out may alias x.
int launch_rms_norm_rope(Stream s, const View3& x, Gain gain, float eps, const int32_t* positions,
                         const float* inv_freq, const View3& out);

// ABI 1.2 rms_norm_multi: out[i] <- rmsnorm(x) * gain[i] for i < count,
// one mean of squares per row.  Rows of at most 16 x 256 columns take one
// kernel (one block per row, the row and the gains in registers); wider rows
// take an rms_norm launch per output.
constexpr int kNormMultiMax = 4;
struct NormOuts {
  int32_t count = 0;
  Gain gain[kNormMultiMax];
  Mat out[kNormMultiMax];
};
int launch_rms_norm_multi(Stream s, const Mat& x, float eps, const NormOuts& outs);

}  // namespace seatrt::cuda
