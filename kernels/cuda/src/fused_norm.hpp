// Launchers of the fused norms (k_fused_norm.cu,
// k_qkv_store.cu), called by the argument checks in ops*.cpp.  Same conventions as launch.hpp: plain views,
// work enqueued on `s`, the launch's cudaError_t returned as int.
#pragma once

#include <cstdint>

#include "launch.hpp"

namespace seatrt::cuda {

// residual <- (residual + rmsnorm(x) * x_gain) * scale; then, when out.data
// is non-NULL, out <- rmsnorm(residual) * out_gain.  One block per row.
int launch_add_rms_norm(Stream s, const Mat& x, Gain x_gain, const Mat& residual, float eps, float scale,
                        Gain out_gain, const Mat& out);

// out <- rope(rmsnorm(x) * gain) per (token, head) row of [T, heads, D].
// One block per row; the row is staged in shared memory, so out may alias x.
int launch_rms_norm_rope(Stream s, const View3& x, Gain gain, float eps, const int32_t* positions,
                         const float* inv_freq, const View3& out);

// rms_norm_multi: out[i] <- rmsnorm(x) * gain[i] for i < count,
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

// add_rms_norm_pair: s = rmsnorm(a) * a_gain + rmsnorm(b) * b_gain;
// residual <- (residual + rmsnorm(s) * s_gain) * scale; then, when out.data
// is non-NULL, out <- rmsnorm(residual) * out_gain.  One block per row.
int launch_add_rms_norm_pair(Stream s, const Mat& a, Gain a_gain, const Mat& b, Gain b_gain, Gain s_gain,
                             const Mat& residual, float eps, float scale, Gain out_gain, const Mat& out);

// qkv_norm_rope_store: q normed and rotated in place; k normed and
// rotated, v (or the raw k) normed, both stored into the paged cache.
struct QkvStoreProblem {
  View3 q;     // [T, q_heads, D], read and written
  View3 k, v;  // [T, kv_heads, D]; v.data NULL: v from the raw k
  Gain q_gain, k_gain, v_gain;
  float eps = 0.0f;
  const int32_t* positions = nullptr;
  const float* inv_freq = nullptr;  // [D/2]
  const int64_t* slots = nullptr;   // [T]; -1 (or out of range) skips the store
  void* k_cache = nullptr;
  void* v_cache = nullptr;          // NULL: the layer stores one tensor (k')
  int32_t cache_dtype = 0;
  int64_t num_slots = 0;
  float k_scale = 1.0f, v_scale = 1.0f;  // 1 unless the cache is F8
};
int launch_qkv_norm_rope_store(Stream s, const QkvStoreProblem& p);

}  // namespace seatrt::cuda
