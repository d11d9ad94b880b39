// Paged KV cache: kv_store and attention.  The general kernel (mixed
// batches the prefill kernel does not take): one block of kWarps warps per
// (query row, q head, split); the warps take
// keys round-robin, each keeps an online softmax (running max, sum and
// weighted V in fp32) and the warps' states are merged at the end.
// A lane holds DPL consecutive elements of the head dim (D <= 32 * DPL).
#include "device_common.cuh"
#include "pdl.cuh"

namespace seatrt::cuda {
namespace {

constexpr int kWarps = 8;

// One element of K (and V) per thread over a flat grid-stride range, both
// loads before both stores: the per-token block loop it replaces stored
// between loads, so each of a decode token's 8-16 elements per thread
// waited a full memory latency (ncu, 2026-12-01: ~10 µs for one token).
// The flat index is divided in 32 bits when it fits (at 8k prompt rows
// 64-bit index math made an earlier version a quarter of its bandwidth).
__global__ void kv_store_kernel(KvStoreProblem p) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int heads = static_cast<int>(p.k.d1), dim = static_cast<int>(p.k.d2), per_token = heads * dim;
  const int64_t total = p.k.d0 * per_token;
  const bool narrow = total <= 0x7fffffff;  // 32-bit division (a 64-bit one is ~5x the instructions)
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = narrow ? int64_t(uint32_t(i) / uint32_t(per_token)) : i / per_token;
    const int e = static_cast<int>(i - t * per_token), h = e / dim, d = e - h * dim;
    const int64_t slot = p.slots[t];
    const float kv = load_as_float(p.k.data, p.k.dtype, t * p.k.s0 + h * p.k.s1 + d);
    const float vv = p.v.data ? load_as_float(p.v.data, p.v.dtype, t * p.v.s0 + h * p.v.s1 + d) : 0.0f;
    if (slot < 0 || slot >= p.num_slots) continue;  // -1 skips; out of range is ignored
    const int64_t dst = slot * per_token + e;
    // Scales apply to F8 caches only ("1.0 otherwise", kernels.h).
    store_from_float(p.k_cache, p.cache_dtype, dst, kv / p.k_scale);
    if (p.v.data) store_from_float(p.v_cache, p.cache_dtype, dst, vv / p.v_scale);
  }
}

template <int DPL>
__device__ __forceinline__ void load_row(const void* base, int32_t dtype, int64_t off, int lane,
                                         int64_t dim, float scale, float (&v)[DPL]) {
  const int64_t start = off + int64_t(lane) * DPL;
  if (dtype == SEATRT_DTYPE_BF16 && DPL % 8 == 0 && int64_t(lane + 1) * DPL <= dim) {
    const uint4* p = reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(base) + start);
#pragma unroll
    for (int c = 0; c < DPL / 8; ++c) {
      uint4 u = p[c];
      const __nv_bfloat162* b = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(b[j]);
        v[c * 8 + 2 * j] = f.x * scale;
        v[c * 8 + 2 * j + 1] = f.y * scale;
      }
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < DPL; ++i)
    v[i] = (int64_t(lane) * DPL + i < dim) ? load_as_float(base, dtype, start + i) * scale : 0.0f;
}

// One block per (query row, q head, KV split).  The split's keys go to the
// warps round-robin, two keys per step with both loads issued before use.
// With one split the block writes the output; otherwise it writes its
// partial state (max, sum, unnormalised accumulator) for the combine kernel.
template <int DPL>
__global__ void __launch_bounds__(kWarps * 32) attention_kernel(AttentionProblem p, float* partial) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t t = blockIdx.x;
  const int qh = blockIdx.y, split = blockIdx.z, splits = gridDim.z;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t dim = p.q.d2;
  const int q_heads = static_cast<int>(p.q.d1);
  const int kvh = qh / (q_heads / p.kv_heads);

  // Which sequence owns row t: the last s with query_start[s] <= t.
  int lo = 0, hi = p.num_seqs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (p.query_start[mid] <= t) lo = mid; else hi = mid - 1;
  }
  const int seq = lo;
  const int64_t n_rows = p.query_start[seq + 1] - p.query_start[seq];
  const int64_t pos = p.seq_lens[seq] - n_rows + (t - p.query_start[seq]);
  int64_t first = 0;
  if (p.window > 0 && pos - p.window + 1 > 0) first = pos - p.window + 1;
  // This split's share of [first, pos].
  const int64_t span = pos - first + 1 > 0 ? pos - first + 1 : 0;
  const int64_t per = (span + splits - 1) / splits;
  const int64_t begin = first + split * per;
  const int64_t end = begin + per - 1 < pos ? begin + per - 1 : pos;  // inclusive
  const int32_t* table = p.block_tables + seq * p.block_table_stride;

  float q[DPL];
  load_row<DPL>(p.q.data, p.q.dtype, t * p.q.s0 + qh * p.q.s1, lane, dim, 1.0f, q);

  float m = -INFINITY, l = 0.0f, acc[DPL];
#pragma unroll
  for (int i = 0; i < DPL; ++i) acc[i] = 0.0f;

  auto key_offset = [&](int64_t j) -> int64_t {
    if (j / p.block_size >= p.max_blocks_per_seq) return -1;
    const int32_t block = table[j / p.block_size];
    if (block < 0 || block >= p.num_blocks) return -1;
    return ((int64_t(block) * p.block_size + j % p.block_size) * p.kv_heads + kvh) * dim;
  };
  for (int64_t j0 = begin + warp; j0 <= end; j0 += 2 * kWarps) {
    const int64_t j1 = j0 + kWarps;
    const int64_t o0 = key_offset(j0), o1 = j1 <= end ? key_offset(j1) : -1;
    float k0[DPL], k1[DPL], v0[DPL], v1[DPL];
    load_row<DPL>(p.k_cache, p.cache_dtype, o0 < 0 ? 0 : o0, lane, dim, p.k_scale, k0);
    load_row<DPL>(p.k_cache, p.cache_dtype, o1 < 0 ? 0 : o1, lane, dim, p.k_scale, k1);
    load_row<DPL>(p.v_cache, p.cache_dtype, o0 < 0 ? 0 : o0, lane, dim, p.v_scale, v0);
    load_row<DPL>(p.v_cache, p.cache_dtype, o1 < 0 ? 0 : o1, lane, dim, p.v_scale, v1);
    float d0 = 0.0f, d1 = 0.0f;
#pragma unroll
    for (int i = 0; i < DPL; ++i) { d0 += q[i] * k0[i]; d1 += q[i] * k1[i]; }
    float s0 = warp_sum(d0) * p.scale, s1 = warp_sum(d1) * p.scale;
    if (p.softcap > 0.0f) { s0 = p.softcap * tanhf(s0 / p.softcap); s1 = p.softcap * tanhf(s1 / p.softcap); }
    if (o0 < 0) s0 = -INFINITY;  // unmapped key: skipped
    if (o1 < 0) s1 = -INFINITY;
    const float m_new = fmaxf(m, fmaxf(s0, s1));
    if (m_new == -INFINITY) continue;
    const float corr = expf(m - m_new);  // 0 when m is -inf
    const float w0 = expf(s0 - m_new), w1 = expf(s1 - m_new);
    l = l * corr + w0 + w1;
#pragma unroll
    for (int i = 0; i < DPL; ++i) acc[i] = acc[i] * corr + w0 * v0[i] + w1 * v1[i];
    m = m_new;
  }

  // Merge the warps' states.
  __shared__ float sm_m[kWarps], sm_l[kWarps];
  __shared__ float sm_acc[kWarps][32 * DPL];
  if (lane == 0) { sm_m[warp] = m; sm_l[warp] = l; }
#pragma unroll
  for (int i = 0; i < DPL; ++i) sm_acc[warp][lane * DPL + i] = acc[i];
  __syncthreads();
  float gm = -INFINITY;
  for (int w = 0; w < kWarps; ++w) gm = fmaxf(gm, sm_m[w]);
  float gl = 0.0f;
  for (int w = 0; w < kWarps; ++w) gl += sm_m[w] == -INFINITY ? 0.0f : sm_l[w] * expf(sm_m[w] - gm);
  float* part = splits > 1 ? partial + ((t * q_heads + qh) * splits + split) * (dim + 2) : nullptr;
  if (part && threadIdx.x == 0) { part[0] = gm; part[1] = gl; }
  const float inv = gl > 0.0f ? 1.0f / gl : 0.0f;
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
    float o = 0.0f;
    for (int w = 0; w < kWarps; ++w)
      if (sm_m[w] != -INFINITY) o += sm_acc[w][d] * expf(sm_m[w] - gm);
    if (part) part[2 + d] = o;
    else store_from_float(p.out.data, p.out.dtype, t * p.out.s0 + qh * p.out.s1 + d, o * inv);
  }
}

// Merges the splits of one (row, head).
__global__ void attention_combine_kernel(AttentionProblem p, const float* partial, int splits) {
  pdl_enter();  // before any global access (pdl.cuh)
  const int64_t t = blockIdx.x;
  const int qh = blockIdx.y, q_heads = static_cast<int>(p.q.d1);
  const int64_t dim = p.q.d2;
  const float* part = partial + (t * q_heads + qh) * splits * (dim + 2);
  float gm = -INFINITY;
  for (int s = 0; s < splits; ++s) gm = fmaxf(gm, part[s * (dim + 2)]);
  float gl = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const float ms = part[s * (dim + 2)];
    if (ms != -INFINITY) gl += part[s * (dim + 2) + 1] * expf(ms - gm);
  }
  const float inv = gl > 0.0f ? 1.0f / gl : 0.0f;
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
    float o = 0.0f;
    for (int s = 0; s < splits; ++s) {
      const float ms = part[s * (dim + 2)];
      if (ms != -INFINITY) o += part[s * (dim + 2) + 2 + d] * expf(ms - gm);
    }
    store_from_float(p.out.data, p.out.dtype, t * p.out.s0 + qh * p.out.s1 + d, o * inv);
  }
}

}  // namespace

int launch_kv_store(Stream s, const KvStoreProblem& p) {
  if (p.k.d0 * p.k.d1 * p.k.d2 == 0) return 0;
  const int64_t blocks = ceil_div(p.k.d0 * p.k.d1 * p.k.d2, 256);
  (void)launch_pdl(kv_store_kernel, static_cast<unsigned>(blocks < 132 * 16 ? blocks : 132 * 16), 256, 0,
                   cudaStream_t(s), p);
  return last_error();
}

int attention_splits(const AttentionProblem& p, int32_t max_seq_len) {
  // Enough blocks to fill the GPU: split long key ranges while rows x heads
  // is small (decode); prefill has blocks enough.
  const int64_t blocks = p.q.d0 * p.q.d1;
  int64_t range = max_seq_len > 0 ? max_seq_len : 1;
  if (p.window > 0 && range > p.window) range = p.window;
  int64_t splits = (range + 63) / 64;  // 64 keys per split: 4 steps of 2 keys per warp
  while (splits > 1 && blocks * splits > 132 * 16) splits /= 2;
  return static_cast<int>(splits < 1 ? 1 : splits > 32 ? 32 : splits);
}

size_t attention_workspace_bytes(const AttentionProblem& p, int splits) {
  return splits > 1 ? sizeof(float) * static_cast<size_t>(p.q.d0 * p.q.d1 * splits * (p.q.d2 + 2)) : 0;
}

int launch_attention(Stream s, const AttentionProblem& p, int splits, float* workspace) {
  if (p.q.d0 == 0) return 0;
  const dim3 grid(static_cast<unsigned>(p.q.d0), static_cast<unsigned>(p.q.d1), static_cast<unsigned>(splits));
  cudaStream_t st = cudaStream_t(s);
  if (p.q.d2 <= 128) (void)launch_pdl(attention_kernel<4>, grid, kWarps * 32, 0, st, p, workspace);
  else if (p.q.d2 <= 256) (void)launch_pdl(attention_kernel<8>, grid, kWarps * 32, 0, st, p, workspace);
  else (void)launch_pdl(attention_kernel<16>, grid, kWarps * 32, 0, st, p, workspace);
  if (splits > 1) {
    if (int e = last_error()) return e;
    (void)launch_pdl(attention_combine_kernel, dim3(grid.x, grid.y), 128, 0, st, p, workspace, splits);
  }
  return last_error();
}

}  // namespace seatrt::cuda
