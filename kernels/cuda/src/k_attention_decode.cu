// Paged attention for decode batches (the path attention_decode.hpp
// declares; k_attention.cu keeps kv_store and the general kernel).
#include "attention_decode.hpp"
#include "device_common.cuh"
#include "pdl.cuh"

namespace seatrt::cuda {

// Decode: one query row per sequence.  One block of kDecodeWarps warps per
// (sequence, KV head, key split) computes all G = q_heads / kv_heads q heads
// of that KV head, so each K/V row leaves HBM once per group (the general
// kernel in k_attention.cu re-reads it for every q head).  A key row is read as 16-byte
// chunks: kLanes lanes share one key (kLanes * 16 bytes = the row, up to 32
// lanes; wider rows give each lane kCpl chunks), so one warp load covers
// kGroups = 32 / kLanes keys and each lane has kUnroll * kCpl K loads (and
// as many V loads) in flight per step.  The warps split the heads into
// subsets of HG (q and the accumulator stay in registers: HG x kE floats
// each) and the keys into nkp = kDecodeWarps / subsets interleaved tiles;
// with 8 q heads the four warps read the same keys, served by L1.
// Scores live in the log2 domain (exp2f); K's scale folds into the score
// and V's into the output.  Each lane group keeps its own online softmax;
// the block merges them through shared memory and either writes the output
// (one split) or its partial state for attention_decode_combine.
namespace {

// Tuning knobs, overridable at build time for benchmarking variants.
#ifndef SEATRT_DECODE_TARGET_BLOCKS
#define SEATRT_DECODE_TARGET_BLOCKS (132 * 4)  // H200: 132 SMs, 4 blocks of <= 128 registers resident each
#endif
#ifndef SEATRT_DECODE_LOADS
#define SEATRT_DECODE_LOADS 4  // 16-byte K loads in flight per lane per step (as many for V)
#endif
constexpr int kDecodeWarps = 4;
constexpr int kDecodeTargetBlocks = SEATRT_DECODE_TARGET_BLOCKS;
constexpr int kDecodeMaxSplits = 256;
constexpr float kLog2e = 1.4426950408889634f;

struct DecodeShape {
  int elem_bytes, epc, chunks, lanes, cpl, groups, unroll, tile;
  __host__ __device__ static constexpr DecodeShape of(bool fp8, int dim) {
    DecodeShape s{};
    s.elem_bytes = fp8 ? 1 : 2;
    s.epc = 16 / s.elem_bytes;                         // elements per 16-byte chunk
    s.chunks = dim / s.epc;                            // chunks per key row
    s.lanes = s.chunks < 32 ? s.chunks : 32;           // lanes sharing one key
    s.cpl = s.chunks / s.lanes;                        // chunks per lane per key
    s.groups = 32 / s.lanes;                           // keys per warp load
    s.unroll = SEATRT_DECODE_LOADS / s.cpl;            // key loads in flight per lane
    s.tile = s.unroll * s.groups;                      // keys per warp step
    return s;
  }
};

// 16 bytes of cache as floats (unscaled).
template <bool FP8>
__device__ __forceinline__ void chunk_to_float(uint4 u, float* f) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
  if constexpr (FP8) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w[i] & 0xffffu), __NV_E4M3);
      const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w[i] >> 16), __NV_E4M3);
      const float2 a = __half22float2(__half2(lo)), b = __half22float2(__half2(hi));
      f[4 * i] = a.x;
      f[4 * i + 1] = a.y;
      f[4 * i + 2] = b.x;
      f[4 * i + 3] = b.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
}

// A sequence's query row and this launch's split of its key range.
struct DecodeRange {
  int64_t row;          // query row t; -1 when the sequence has no row
  int64_t first, last;  // keys [first, last] (inclusive) of the whole range
  int64_t per;          // keys per split
  int64_t active;       // splits holding keys
};

__device__ __forceinline__ DecodeRange decode_range(const AttentionProblem& p, int seq, int splits, int min_chunk) {
  DecodeRange r{};
  const int32_t q_end = p.query_start[seq + 1];
  r.row = q_end - p.query_start[seq] >= 1 ? q_end - 1 : -1;
  r.last = int64_t(p.seq_lens[seq]) - 1;  // the (last) row's position
  r.first = 0;
  if (p.window > 0 && r.last - p.window + 1 > 0) r.first = r.last - p.window + 1;
  const int64_t span = r.last >= r.first ? r.last - r.first + 1 : 0;
  r.per = (span + splits - 1) / splits;
  if (r.per < min_chunk) r.per = min_chunk;
  r.active = (span + r.per - 1) / r.per;
  return r;
}

template <bool FP8, int D, int HG>
__global__ void __launch_bounds__(kDecodeWarps * 32)
    attention_decode_kernel(AttentionProblem p, int min_chunk, float* partial) {
  pdl_enter();  // before any global access (pdl.cuh)
  constexpr DecodeShape S = DecodeShape::of(FP8, D);
  constexpr int L = S.lanes, CPL = S.cpl, U = S.unroll, EPC = S.epc, E = CPL * EPC;
  // The merge buffers below hold every lane group's state of every head.
  static_assert(kDecodeWarps * 32 * HG * E <= 4096 && kDecodeWarps * 32 * HG / L <= 64, "merge buffers too small");
  static_assert(U >= 1 && L >= 8, "unsupported decode shape");
  const int seq = static_cast<int>(blockIdx.x), kvh = static_cast<int>(blockIdx.y);
  const int split = static_cast<int>(blockIdx.z), splits = static_cast<int>(gridDim.z);
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int q_heads = static_cast<int>(p.q.d1), G = q_heads / p.kv_heads;
  const int nhs = G / HG, nkp = kDecodeWarps / nhs;  // head subsets, key partitions
  const int hs = warp % nhs, kp = warp / nhs;
  const int grp = lane / L, li = lane % L;

  const DecodeRange r = decode_range(p, seq, splits, min_chunk);
  if (r.row < 0) return;                               // no query row: nothing to write
  if (splits > 1 && split >= r.active) return;         // idle split: the combine skips it
  const int64_t begin = r.first + split * r.per;
  const int64_t end = begin + r.per - 1 < r.last ? begin + r.per - 1 : r.last;  // inclusive

  // This lane's elements: chunk li + c * L of the row, EPC elements each.
  float q[HG][E];
#pragma unroll
  for (int g = 0; g < HG; ++g) {
    const int64_t qh = int64_t(kvh) * G + hs * HG + g;
#pragma unroll
    for (int c = 0; c < CPL; ++c)
#pragma unroll
      for (int e = 0; e < EPC; ++e)
        q[g][c * EPC + e] = load_as_float(p.q.data, p.q.dtype, r.row * p.q.s0 + qh * p.q.s1 + (li + c * L) * EPC + e);
  }
  const bool capped = p.softcap > 0.0f;
  const float qk_scale = p.scale * p.k_scale * (capped ? 1.0f : kLog2e);

  float m[HG], l[HG], acc[HG][E];
#pragma unroll
  for (int g = 0; g < HG; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.0f;
#pragma unroll
    for (int e = 0; e < E; ++e) acc[g][e] = 0.0f;
  }

  const int32_t* table = p.block_tables + seq * p.block_table_stride;
  const uint4* kbase = static_cast<const uint4*>(p.k_cache);
  const uint4* vbase = static_cast<const uint4*>(p.v_cache);
  const bool one_tensor = p.v_cache == p.k_cache;
  const auto block_size = static_cast<uint32_t>(p.block_size);
  for (int64_t tile0 = begin + int64_t(kp) * S.tile; tile0 <= end; tile0 += int64_t(nkp) * S.tile) {
    // Row offsets (in chunks) of this lane group's U keys; -1: past the end or unmapped.
    int64_t row[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t j = tile0 + u * S.groups + grp;
      row[u] = -1;
      // 32-bit division: positions come from I32 seq_lens (64-bit division
      // is a long subroutine, paid per key).
      const uint32_t ju = static_cast<uint32_t>(j), bi = ju / block_size, off = ju - bi * block_size;
      if (j <= end && bi < p.max_blocks_per_seq) {
        const int32_t b = table[bi];
        if (b >= 0 && b < p.num_blocks) row[u] = ((int64_t(b) * block_size + off) * p.kv_heads + kvh) * S.chunks;
      }
    }
    uint4 kr[U][CPL], vr[U][CPL];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int c = 0; c < CPL; ++c) kr[u][c] = __ldg(kbase + (row[u] < 0 ? 0 : row[u]) + li + c * L);
    // Constant indices only: a select between the two arrays by reference
    // would put them in local memory.
    if (one_tensor) {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int c = 0; c < CPL; ++c) vr[u][c] = kr[u][c];
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int c = 0; c < CPL; ++c) vr[u][c] = __ldg(vbase + (row[u] < 0 ? 0 : row[u]) + li + c * L);
    }
    float s[U][HG];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float kf[E];
#pragma unroll
      for (int c = 0; c < CPL; ++c) chunk_to_float<FP8>(kr[u][c], kf + c * EPC);
#pragma unroll
      for (int g = 0; g < HG; ++g) {
        float d = 0.0f;
#pragma unroll
        for (int e = 0; e < E; ++e) d = fmaf(q[g][e], kf[e], d);
        s[u][g] = d;
      }
    }
    // Sum over the L lanes of each key (xor offsets below L stay in the group).
#pragma unroll
    for (int off = L / 2; off > 0; off >>= 1)
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int g = 0; g < HG; ++g) s[u][g] += __shfl_xor_sync(0xffffffffu, s[u][g], off);
    float w[U][HG];
#pragma unroll
    for (int g = 0; g < HG; ++g) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float x = s[u][g] * qk_scale;
        if (capped) x = p.softcap * tanhf(x / p.softcap) * kLog2e;
        s[u][g] = row[u] < 0 ? -INFINITY : x;
        tile_max = fmaxf(tile_max, s[u][g]);
      }
      const float m_new = fmaxf(m[g], tile_max);
      const bool none = m_new == -INFINITY;  // no key seen yet
      const float corr = none ? 1.0f : exp2f(m[g] - m_new);
      float sum = 0.0f;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        w[u][g] = none ? 0.0f : exp2f(s[u][g] - m_new);
        sum += w[u][g];
      }
      l[g] = l[g] * corr + sum;
      m[g] = m_new;
#pragma unroll
      for (int e = 0; e < E; ++e) acc[g][e] *= corr;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float vf[E];
#pragma unroll
      for (int c = 0; c < CPL; ++c) chunk_to_float<FP8>(vr[u][c], vf + c * EPC);
#pragma unroll
      for (int g = 0; g < HG; ++g)
#pragma unroll
        for (int e = 0; e < E; ++e) acc[g][e] = fmaf(w[u][g], vf[e], acc[g][e]);
    }
  }

  // Merge the lane groups' states: state kp * groups + grp, block head h.
  // Their accumulators fill 128 * HG * E <= 4096 floats (16 KiB).
  __shared__ float sm_acc[4096];
  __shared__ float sm_m[64], sm_l[64];
#pragma unroll
  for (int g = 0; g < HG; ++g) {
    const int idx = (kp * S.groups + grp) * G + hs * HG + g;
    if (li == 0) {
      sm_m[idx] = m[g];
      sm_l[idx] = l[g];
    }
#pragma unroll
    for (int c = 0; c < CPL; ++c)
#pragma unroll
      for (int e = 0; e < EPC; ++e) sm_acc[idx * D + (li + c * L) * EPC + e] = acc[g][c * EPC + e];
  }
  __syncthreads();
  const int states = nkp * S.groups;
  for (int i = static_cast<int>(threadIdx.x); i < G * D; i += static_cast<int>(blockDim.x)) {
    const int h = i / D, d = i % D;
    float gm = -INFINITY;
    for (int st = 0; st < states; ++st) gm = fmaxf(gm, sm_m[st * G + h]);
    float gl = 0.0f, o = 0.0f;
    for (int st = 0; st < states; ++st) {
      const float ms = sm_m[st * G + h];
      if (ms == -INFINITY) continue;
      const float f = exp2f(ms - gm);
      gl += sm_l[st * G + h] * f;
      o += sm_acc[(st * G + h) * D + d] * f;
    }
    const int64_t qh = int64_t(kvh) * G + h;
    if (splits == 1) {
      store_from_float(p.out.data, p.out.dtype, r.row * p.out.s0 + qh * p.out.s1 + d,
                       gl > 0.0f ? o * p.v_scale / gl : 0.0f);
    } else {
      float* part = partial + ((int64_t(seq) * q_heads + qh) * splits + split) * (D + 2);
      if (d == 0) {
        part[0] = gm;
        part[1] = gl;
      }
      part[2 + d] = o * p.v_scale;
    }
  }
}

// Merges the active splits of one (sequence, q head, 64 output elements);
// a split whose keys were all unmapped has max -inf and weight 0.  Batch 1
// with a long context has many splits and few (sequence, head) pairs, so
// the block also spreads the splits over kCombineSplitLanes thread groups,
// and the split weights go to shared memory first so the output loop's
// loads are independent (several in flight) rather than chained.
constexpr int kCombineDims = 64, kCombineSplitLanes = 4;

__global__ void __launch_bounds__(kCombineDims * kCombineSplitLanes)
    attention_decode_combine(AttentionProblem p, const float* partial, int splits, int min_chunk) {
  pdl_enter();  // before any global access (pdl.cuh)
  __shared__ float weight[kDecodeMaxSplits];
  __shared__ float reduce[32];
  __shared__ float sums[kCombineSplitLanes][kCombineDims];
  const int seq = static_cast<int>(blockIdx.x), qh = static_cast<int>(blockIdx.y);
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int64_t dim = p.q.d2, stride = dim + 2;
  const DecodeRange r = decode_range(p, seq, splits, min_chunk);
  if (r.row < 0) return;
  const int active = static_cast<int>(r.active < splits ? r.active : splits);
  const float* part = partial + (int64_t(seq) * p.q.d1 + qh) * splits * stride;
  float gm = -INFINITY;
  for (int s = tid; s < active; s += threads) gm = fmaxf(gm, part[s * stride]);
  gm = block_max(gm, reduce);
  float gl = 0.0f;
  for (int s = tid; s < active; s += threads) {
    const float ms = part[s * stride];
    const float w = ms == -INFINITY ? 0.0f : exp2f(ms - gm);
    weight[s] = w;
    gl += w * part[s * stride + 1];
  }
  gl = block_sum(gl, reduce);  // its barriers also publish weight[]
  const int dl = tid % kCombineDims, group = tid / kCombineDims;
  const int64_t d = int64_t(blockIdx.z) * kCombineDims + dl;
  float o = 0.0f;
  if (d < dim) {
#pragma unroll 8
    for (int s = group; s < active; s += kCombineSplitLanes) o = fmaf(part[s * stride + 2 + d], weight[s], o);
  }
  sums[group][dl] = o;
  __syncthreads();
  if (group == 0 && d < dim) {
    for (int g = 1; g < kCombineSplitLanes; ++g) o += sums[g][dl];
    store_from_float(p.out.data, p.out.dtype, r.row * p.out.s0 + qh * p.out.s1 + d, gl > 0.0f ? o / gl : 0.0f);
  }
}

int decode_group(const AttentionProblem& p) { return static_cast<int>(p.q.d1 / p.kv_heads); }
int decode_hg(int group) { return group == 1 ? 1 : 2; }

// The fewest keys per split: one tile per warp, and at least as many key
// bytes as the split's partial state (G x D floats, written and read back).
int decode_min_chunk(const AttentionProblem& p) {
  const bool fp8 = p.cache_dtype == SEATRT_DTYPE_F8_E4M3;
  const DecodeShape s = DecodeShape::of(fp8, static_cast<int>(p.q.d2));
  const int group = decode_group(p);
  const int nkp = kDecodeWarps / (group / decode_hg(group));
  const int tensors = p.v_cache == p.k_cache ? 1 : 2;
  const int by_tiles = s.tile * nkp;
  const int by_bytes = (group * 4 + s.elem_bytes * tensors - 1) / (s.elem_bytes * tensors);
  return by_tiles > by_bytes ? by_tiles : by_bytes;
}

template <bool FP8, int D>
void launch_decode_dim(cudaStream_t st, const dim3& grid, const AttentionProblem& p, int min_chunk, float* ws) {
  if (decode_hg(decode_group(p)) == 1)
    (void)launch_pdl(attention_decode_kernel<FP8, D, 1>, grid, kDecodeWarps * 32, 0, st, p, min_chunk, ws);
  else (void)launch_pdl(attention_decode_kernel<FP8, D, 2>, grid, kDecodeWarps * 32, 0, st, p, min_chunk, ws);
}

template <bool FP8>
void launch_decode_dtype(cudaStream_t st, const dim3& grid, const AttentionProblem& p, int min_chunk, float* ws) {
  if (p.q.d2 == 128) launch_decode_dim<FP8, 128>(st, grid, p, min_chunk, ws);
  else if (p.q.d2 == 256) launch_decode_dim<FP8, 256>(st, grid, p, min_chunk, ws);
  else launch_decode_dim<FP8, 512>(st, grid, p, min_chunk, ws);
}

}  // namespace

bool attention_decode_supported(const AttentionProblem& p, int32_t max_query_len) {
  if (max_query_len != 1 || p.q.d0 != p.num_seqs || p.num_seqs < 1) return false;
  if (p.cache_dtype != SEATRT_DTYPE_F8_E4M3 && p.cache_dtype != SEATRT_DTYPE_BF16) return false;
  if (p.q.d2 != 128 && p.q.d2 != 256 && p.q.d2 != 512) return false;
  if (p.kv_heads > 65535 || p.kv_heads < 1) return false;  // grid.y
  const int64_t group = p.q.d1 / p.kv_heads;
  return group == 1 || group == 2 || group == 4 || group == 8;
}

int attention_decode_splits(const AttentionProblem& p, int32_t max_seq_len) {
  const int64_t base = int64_t(p.num_seqs) * p.kv_heads;
  int64_t range = max_seq_len > 0 ? max_seq_len : 1;
  if (p.window > 0 && range > p.window) range = p.window;
  // Rounded down: whole waves of resident blocks (a 1.2-wave grid idles
  // most of the GPU during its second wave).
  int64_t splits = kDecodeTargetBlocks / base;
  const int64_t by_range = (range + decode_min_chunk(p) - 1) / decode_min_chunk(p);
  if (splits > by_range) splits = by_range;
  if (splits > kDecodeMaxSplits) splits = kDecodeMaxSplits;
  return static_cast<int>(splits < 1 ? 1 : splits);
}

size_t attention_decode_workspace_bytes(const AttentionProblem& p, int splits) {
  return splits > 1 ? sizeof(float) * static_cast<size_t>(p.num_seqs * p.q.d1 * splits * (p.q.d2 + 2)) : 0;
}

int launch_attention_decode(Stream s, const AttentionProblem& p, int splits, float* workspace) {
  const dim3 grid(static_cast<unsigned>(p.num_seqs), static_cast<unsigned>(p.kv_heads), static_cast<unsigned>(splits));
  cudaStream_t st = cudaStream_t(s);
  const int min_chunk = decode_min_chunk(p);
  if (p.cache_dtype == SEATRT_DTYPE_F8_E4M3) launch_decode_dtype<true>(st, grid, p, min_chunk, workspace);
  else launch_decode_dtype<false>(st, grid, p, min_chunk, workspace);
  if (splits > 1) {
    if (int e = last_error()) return e;
    const dim3 cgrid(grid.x, static_cast<unsigned>(p.q.d1), static_cast<unsigned>(ceil_div(p.q.d2, kCombineDims)));
    (void)launch_pdl(attention_decode_combine, cgrid, kCombineDims * kCombineSplitLanes, 0, st,
        p, workspace, splits, min_chunk);
  }
  return last_error();
}

}  // namespace seatrt::cuda
