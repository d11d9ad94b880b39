// Router top-k (softmax over all experts in fp32, top-k with ties to the
// lower id, optional renormalisation and per-expert scale) and the per-row
// statistics the sampler's greedy fast path needs.  One warp per row up to
// 256 experts and top-8..32 (the model: 128, top-8), else one block per row.
#include "device_common.cuh"
#include "pdl.cuh"
#include "router_topk.cuh"

namespace seatrt::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxExperts = 1024;

// Block-wide arg-max over (value, index) with ties to the lower index.
__device__ void block_argmax(float& v, int& idx, float* sv, int* si) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  warp_argmax(v, idx);
  __syncthreads();
  if (lane == 0) { sv[warp] = v; si[warp] = idx; }
  __syncthreads();
  const int nwarps = blockDim.x >> 5;
  v = lane < nwarps ? sv[lane] : -INFINITY;
  idx = lane < nwarps ? si[lane] : 0x7fffffff;
  warp_argmax(v, idx);
}

__global__ void router_kernel(Mat logits, int32_t top_k, bool renormalize, const void* pes,
                              int32_t pes_dtype, int32_t* ids, float* weights) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float prob[kMaxExperts];
  __shared__ float scratch[32];
  __shared__ float sv[32];
  __shared__ int si[32];
  __shared__ float chosen_w[64];
  const int64_t r = blockIdx.x;
  const int E = static_cast<int>(logits.cols);
  float mx = -INFINITY;
  for (int e = threadIdx.x; e < E; e += blockDim.x) {
    prob[e] = mat_load(logits, r, e);
    mx = fmaxf(mx, prob[e]);
  }
  mx = block_max(mx, scratch);
  float sum = 0.0f;
  for (int e = threadIdx.x; e < E; e += blockDim.x) {
    prob[e] = expf(prob[e] - mx);
    sum += prob[e];
  }
  sum = block_sum(sum, scratch);
  for (int e = threadIdx.x; e < E; e += blockDim.x) prob[e] /= sum;
  __syncthreads();
  float total = 0.0f;
  for (int j = 0; j < top_k; ++j) {
    float v = -INFINITY;
    int idx = 0x7fffffff;
    for (int e = threadIdx.x; e < E; e += blockDim.x)
      if (prob[e] > v || (prob[e] == v && e < idx)) { v = prob[e]; idx = e; }
    block_argmax(v, idx, sv, si);
    if (threadIdx.x == 0) {
      ids[r * top_k + j] = idx;
      chosen_w[j] = v;
      prob[idx] = -INFINITY;  // excluded from the next rounds (probabilities are >= 0)
    }
    total += v;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    for (int j = 0; j < top_k; ++j) {
      float w = chosen_w[j];
      if (renormalize) w = total > 0.0f ? w / total : 0.0f;
      if (pes) w *= load_as_float(pes, pes_dtype, ids[r * top_k + j]);
      weights[r * top_k + j] = w;
    }
  }
}

// One warp per row (E <= kWarpExperts, top_k <= kWarpTopK): router_topk.cuh.
__global__ void router_warp_kernel(Mat logits, int32_t top_k, bool renormalize, const void* pes,
                                   int32_t pes_dtype, int32_t* ids, float* weights) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t r = blockIdx.x;
  warp_topk_row([&](int e) { return mat_load(logits, r, e); }, static_cast<int>(logits.cols), top_k, renormalize,
                pes, pes_dtype, ids + r * top_k, weights + r * top_k);
}

__global__ void row_stats_kernel(const float* logits, int64_t vocab, int64_t row_stride, RowStats* out) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float scratch[32];
  __shared__ float sv[32];
  __shared__ int si[32];
  const float* row = logits + blockIdx.x * row_stride;
  float v = -INFINITY;
  int idx = 0x7fffffff;
  float bad = 0.0f;
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float x = row[i];
    if (!isfinite(x)) bad = 1.0f;
    if (x > v || (x == v && i < idx)) { v = x; idx = static_cast<int>(i); }
  }
  bad = block_max(bad, scratch);
  block_argmax(v, idx, sv, si);
  const float mx = v;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) sum += expf(row[i] - mx);
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) {
    out[blockIdx.x].argmax = idx;
    out[blockIdx.x].non_finite = bad > 0.0f ? 1 : 0;
    out[blockIdx.x].max_logit = mx;
    out[blockIdx.x].log_sum_exp = logf(sum) + mx;
  }
}

}  // namespace

int launch_router_topk(Stream s, const Mat& logits, int32_t top_k, bool renormalize,
                       const void* per_expert_scale, int32_t scale_dtype, int32_t* ids, float* weights) {
  if (logits.rows == 0) return 0;
  if (logits.cols <= kWarpExperts && top_k <= kWarpTopK)
    (void)launch_pdl(router_warp_kernel, static_cast<unsigned>(logits.rows), 32, 0, cudaStream_t(s), logits, top_k,
                     renormalize, per_expert_scale, scale_dtype, ids, weights);
  else
    (void)launch_pdl(router_kernel, static_cast<unsigned>(logits.rows), kThreads, 0, cudaStream_t(s),
        logits, top_k, renormalize, per_expert_scale, scale_dtype, ids, weights);
  return last_error();
}

int launch_row_stats(Stream s, const float* logits, int64_t rows, int64_t vocab, int64_t row_stride,
                     RowStats* out) {
  if (rows == 0) return 0;
  (void)launch_pdl(row_stats_kernel, static_cast<unsigned>(rows), 1024, 0, cudaStream_t(s),
      logits, vocab, row_stride, out);
  return last_error();
}

}  // namespace seatrt::cuda
