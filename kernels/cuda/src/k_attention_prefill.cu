// Prefill attention on the tensor cores (flash-attention style) over the
// paged KV cache, for BF16 queries (F32 ones are rounded to BF16 as they
// are staged: the caller opts in, see ops_attention.cpp) and F8_E4M3 or
// BF16 caches.
//
// One block of 16 warps takes a tile of up to 64 query rows of one sequence
// and one q head, and walks the keys that tile can see (causal; the sliding
// window cuts the front) in steps of 64:
//  1. the 64 keys' K (and V) rows are gathered through the block table into
//     shared memory as BF16 without their scale (an E4M3 value is exact in
//     BF16; k_scale multiplies the scores and v_scale the output, in fp32);
//  2. S = Q K^T: warp (r, c) computes rows 16r.. x keys 16c.. over the head
//     dim with mma.m16n8k16 (BF16 in, fp32 out); scale, softcap and the
//     masks are applied and S goes to shared memory;
//  3. online softmax in fp32 per row (running max m and sum l), P = exp(S - m)
//     rounded to BF16 for the second MMA, the rescale factor per row;
//  4. O = O * corr + P V: warp (r, q) keeps rows 16r.. x head-dim quarter q
//     of O in fp32 registers.
// Rows of a tile and their key ranges come from query_start/seq_lens on the
// device; the tile list is made by a small kernel.  Decode-shaped batches
// keep the CUDA-core kernel of k_attention.cu.  Head dims 256 and 512 take
// the wgmma kernel of k_attention_prefill_wgmma.cu instead, over the same
// tile list; this one serves head dim 128, unaligned caches and
// SEATRT_PREFILL_ATTENTION=mma.
#include "device_common.cuh"
#include "prefill.hpp"
#include "prefill_attention.hpp"

namespace seatrt::cuda {
namespace {

constexpr int kFaRows = 64, kFaKeys = 64, kFaWarps = 16, kFaThreads = kFaWarps * 32;

// Shared-memory layout for head dim D (BF16 rows padded by 8 elements so
// ldmatrix rows fall in different banks).
template <int D>
struct FaSmem {
  static constexpr int kLd = D + 8, kSLd = kFaKeys + 4, kPLd = kFaKeys + 8;
  static constexpr size_t q = 0;
  static constexpr size_t k = q + sizeof(__nv_bfloat16) * kFaRows * kLd;
  static constexpr size_t v = k + sizeof(__nv_bfloat16) * kFaKeys * kLd;
  static constexpr size_t s = v + sizeof(__nv_bfloat16) * kFaKeys * kLd;
  static constexpr size_t pb = s + sizeof(float) * kFaRows * kSLd;
  static constexpr size_t m = pb + sizeof(__nv_bfloat16) * kFaRows * kPLd;
  static constexpr size_t l = m + sizeof(float) * kFaRows;
  static constexpr size_t corr = l + sizeof(float) * kFaRows;
  // Cache element offsets of two key steps' rows (double-buffered: the
  // next step's are made while this step's are in use), -1 when unmapped.
  static constexpr size_t koff = corr + sizeof(float) * kFaRows;
  // Raw cache bytes of the NEXT key step (cp.async), for layers with separate
  // K and V caches up to head dim 256; one-tensor layers use the unused V
  // region instead (V = K), and two-tensor head-dim-512 layers do not
  // prefetch (227 KiB of shared memory is the limit).
  static constexpr size_t raw = (koff + sizeof(int64_t) * 2 * kFaKeys + 127) / 128 * 128;
  static constexpr size_t raw_bytes = D <= 256 ? 2 * kFaKeys * D * 2 : 0;
  static constexpr size_t bytes = raw + raw_bytes;
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldsm_x4(uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
// d += a (16x16 bf16, row) * b (16x8 bf16, col), fp32 accumulators.
__device__ __forceinline__ void mma_bf16(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 8 cache elements (F8_E4M3 or BF16) at `src` as 8 BF16 values, unscaled.
__device__ __forceinline__ uint4 cache8(const void* base, int32_t dtype, int64_t off) {
  if (dtype == SEATRT_DTYPE_BF16) return *reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(base) + off);
  const uint2 raw = *reinterpret_cast<const uint2*>(static_cast<const uint8_t*>(base) + off);
  const uint32_t w[2] = {raw.x, raw.y};
  uint4 r;
  uint32_t* o = reinterpret_cast<uint32_t*>(&r);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_fp8x2_storage_t pair = static_cast<__nv_fp8x2_storage_t>(w[i / 2] >> (16 * (i % 2)));
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3);
    const float2 f = __half22float2(__half2(h));
    __nv_bfloat162 b = __floats2bfloat162_rn(f.x, f.y);  // exact: 4 significant bits
    o[i] = *reinterpret_cast<uint32_t*>(&b);
  }
  return r;
}

__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// 8 BF16 values from 8 raw cache elements in shared memory (unscaled).
__device__ __forceinline__ uint4 raw8(const unsigned char* src, int32_t dtype) {
  if (dtype == SEATRT_DTYPE_BF16) return *reinterpret_cast<const uint4*>(src);
  const uint2 raw = *reinterpret_cast<const uint2*>(src);
  const uint32_t w[2] = {raw.x, raw.y};
  uint4 r;
  uint32_t* o = reinterpret_cast<uint32_t*>(&r);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_fp8x2_storage_t pair = static_cast<__nv_fp8x2_storage_t>(w[i / 2] >> (16 * (i % 2)));
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3);
    const float2 f = __half22float2(__half2(h));
    __nv_bfloat162 b = __floats2bfloat162_rn(f.x, f.y);
    o[i] = *reinterpret_cast<uint32_t*>(&b);
  }
  return r;
}

// Row tiles: (sequence, first global row, rows), up to kFaRows rows each.
// Rows are clamped to [0, rows) and the list to `capacity`, so a malformed
// query_start cannot make the attention kernel read or write outside q/out.
__global__ void fa_tiles_kernel(const int32_t* query_start, int num_seqs, int64_t rows, int64_t capacity, int4* tiles,
                                int32_t* num_tiles) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int64_t n = 0;
  for (int s = 0; s < num_seqs; ++s) {
    const int64_t lo = query_start[s] > 0 ? query_start[s] : 0;
    const int64_t hi = query_start[s + 1] < rows ? query_start[s + 1] : rows;
    for (int64_t r = lo; r < hi && n < capacity; r += kFaRows)
      tiles[n++] = make_int4(s, static_cast<int32_t>(r), static_cast<int32_t>(hi - r < kFaRows ? hi - r : kFaRows), 0);
  }
  *num_tiles = static_cast<int32_t>(n);
}

template <int D>
__global__ void __launch_bounds__(kFaThreads, 1)
    flash_prefill_kernel(AttentionProblem p, const int4* tiles, const int32_t* num_tiles) {
  using L = FaSmem<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  if (int(blockIdx.x) >= *num_tiles) return;
  auto* qs = reinterpret_cast<__nv_bfloat16*>(smem + L::q);
  auto* ks = reinterpret_cast<__nv_bfloat16*>(smem + L::k);
  const bool two = p.v_cache != p.k_cache;
  auto* vs = two ? reinterpret_cast<__nv_bfloat16*>(smem + L::v) : ks;  // one-tensor layers: V = K
  auto* ss = reinterpret_cast<float*>(smem + L::s);
  auto* pb = reinterpret_cast<__nv_bfloat16*>(smem + L::pb);
  auto* row_m = reinterpret_cast<float*>(smem + L::m);
  auto* row_l = reinterpret_cast<float*>(smem + L::l);
  auto* row_corr = reinterpret_cast<float*>(smem + L::corr);
  auto* koff = reinterpret_cast<int64_t*>(smem + L::koff);

  const int4 tile = tiles[blockIdx.x];
  const int seq = tile.x, rows = tile.z;
  const int64_t row0 = tile.y;
  const int qh = blockIdx.y, q_heads = static_cast<int>(p.q.d1);
  const int kvh = qh / (q_heads / p.kv_heads);
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31, g = lane >> 2, tq = lane & 3;
  const int64_t seq_rows = p.query_start[seq + 1] - p.query_start[seq];
  const int64_t pos0 = p.seq_lens[seq] - seq_rows + (row0 - p.query_start[seq]);  // position of tile row 0
  const int32_t* table = p.block_tables + seq * p.block_table_stride;

  // Q tile (rows past the tile's end are zeros), m/l state.
  for (int i = t; i < kFaRows * (D / 8); i += kFaThreads) {
    const int r = i / (D / 8), c = (i % (D / 8)) * 8;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (r < rows) {
      const int64_t at = (row0 + r) * p.q.s0 + qh * p.q.s1 + c;
      __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&v);
      if (p.q.dtype == SEATRT_DTYPE_F32) {
        // F32 q (the provider's opt-in prefill_bf16): rounded to nearest BF16 here.
        const float* src = static_cast<const float*>(p.q.data) + at;
#pragma unroll
        for (int j = 0; j < 8; ++j) e[j] = __float2bfloat16_rn(src[j]);
      } else {
        const __nv_bfloat16* src = static_cast<const __nv_bfloat16*>(p.q.data) + at;
#pragma unroll
        for (int j = 0; j < 8; ++j) e[j] = src[j];
      }
    }
    *reinterpret_cast<uint4*>(qs + r * L::kLd + c) = v;
  }
  if (t < kFaRows) { row_m[t] = -INFINITY; row_l[t] = 0.0f; }

  // The last key any row sees; keys past the block table are unmapped, so a
  // malformed seq_lens cannot make the walk longer than the table.
  int64_t last = pos0 + rows - 1;
  if (last > p.max_blocks_per_seq * p.block_size - 1) last = p.max_blocks_per_seq * p.block_size - 1;
  int64_t first = 0;
  if (p.window > 0 && pos0 - p.window + 1 > 0) first = pos0 - p.window + 1;

  // O: rows 16*(warp/4).., head-dim quarter warp%4, as D/32 n8 tiles.
  constexpr int kOTiles = D / 32;
  float o[kOTiles][4];
#pragma unroll
  for (int i = 0; i < kOTiles; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  const int wr = (warp / 4) * 16, wc = warp % 4;
  const float score_scale = p.scale * p.k_scale;

  // Element offset of key j's row in the caches, -1 when it is past `last`
  // or its block is unmapped.
  auto key_offset = [&](int64_t j) -> int64_t {
    if (j > last || j / p.block_size >= p.max_blocks_per_seq) return -1;
    const int32_t blk = table[j / p.block_size];
    if (blk < 0 || blk >= p.num_blocks) return -1;
    return ((int64_t(blk) * p.block_size + j % p.block_size) * p.kv_heads + kvh) * D;
  };
  const int esz = p.cache_dtype == SEATRT_DTYPE_BF16 ? 2 : 1;
  unsigned char* raw = two ? smem + L::raw : smem + L::v;
  const bool prefetch = (!two || L::raw_bytes > 0) && reinterpret_cast<uintptr_t>(p.k_cache) % 16 == 0 &&
                        reinterpret_cast<uintptr_t>(p.v_cache) % 16 == 0;
  // The key offsets of step j0 into koff buffer b, one thread per key: the
  // 64-bit divisions of the block-table walk run once per key, not once
  // per 16-byte chunk (they cost as much as the step's arithmetic).
  auto fill_offsets = [&](int64_t j0, int b) {
    if (t < kFaKeys) koff[b * kFaKeys + t] = key_offset(j0 + t);
  };
  // Starts the copies of keys j0..j0+63 (K, then V) into `raw`, 16 bytes
  // each, from the offsets in koff buffer b.
  auto issue = [&](int b) {
    const int per_row = D * esz / 16, per_tensor = kFaKeys * per_row;
    for (int i = t; i < (two ? 2 : 1) * per_tensor; i += kFaThreads) {
      const int tensor = i / per_tensor, kr = (i % per_tensor) / per_row, c = i % per_row;
      const int64_t off = koff[b * kFaKeys + kr];
      const unsigned char* base = static_cast<const unsigned char*>(tensor ? p.v_cache : p.k_cache);
      cp_async16(raw + (size_t(tensor) * kFaKeys + kr) * D * esz + c * 16, base + (off < 0 ? 0 : off * esz + c * 16), off >= 0);
    }
    cp_async_commit();
  };
  if (first <= last) fill_offsets(first, 0);
  __syncthreads();
  if (prefetch && first <= last) issue(0);

  int b = 0;  // koff buffer of the current step
  for (int64_t j0 = first; j0 <= last; j0 += kFaKeys, b ^= 1) {
    if (prefetch) cp_async_wait_all();
    __syncthreads();  // the previous step's readers of K/V/P are done; this step's bytes have landed
    // The next step's offsets (buffer b^1 was last read before the barrier).
    if (j0 + kFaKeys <= last) fill_offsets(j0 + kFaKeys, b ^ 1);
    // 1. K (and V) rows of keys j0..j0+63 as BF16 in shared memory: from the
    // prefetched raw bytes, or gathered now.
    for (int i = t; i < kFaKeys * (D / 8); i += kFaThreads) {
      const int kr = i / (D / 8), c = (i % (D / 8)) * 8;
      const int64_t off = koff[b * kFaKeys + kr];
      uint4 kv = make_uint4(0u, 0u, 0u, 0u), vv = kv;
      if (prefetch) {
        kv = raw8(raw + size_t(kr) * D * esz + c * esz, p.cache_dtype);
        if (two) vv = raw8(raw + (size_t(kFaKeys) + kr) * D * esz + c * esz, p.cache_dtype);
      } else if (off >= 0) {
        kv = cache8(p.k_cache, p.cache_dtype, off + c);
        if (two) vv = cache8(p.v_cache, p.cache_dtype, off + c);
      }
      *reinterpret_cast<uint4*>(ks + kr * L::kLd + c) = kv;
      if (two) *reinterpret_cast<uint4*>(vs + kr * L::kLd + c) = vv;
    }
    __syncthreads();
    // The next step's bytes stream in while this step computes.
    if (prefetch && j0 + kFaKeys <= last) issue(b ^ 1);

    // 2. S = Q K^T for rows wr.. and keys 16*(warp%4).. (two n8 tiles).
    {
      const int kc = (warp % 4) * 16;
      float s[2][4] = {};
#pragma unroll 4
      for (int d = 0; d < D; d += 16) {
        uint32_t a[4], b[4];
        ldsm_x4(a, qs + (wr + (lane % 16)) * L::kLd + d + (lane / 16) * 8);
        ldsm_x4(b, ks + (kc + (lane % 8) + (lane / 16) * 8) * L::kLd + d + ((lane / 8) % 2) * 8);
        mma_bf16(s[0], a, b[0], b[1]);
        mma_bf16(s[1], a, b[2], b[3]);
      }
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = wr + g + (e / 2) * 8, c = kc + n * 8 + tq * 2 + (e % 2);
          const int64_t pos = pos0 + r, j = j0 + c;
          float v = s[n][e] * score_scale;
          if (p.softcap > 0.0f) v = p.softcap * tanhf(v / p.softcap);
          const bool visible = r < rows && koff[b * kFaKeys + c] >= 0 && j <= pos && (p.window <= 0 || j > pos - p.window);
          ss[r * L::kSLd + c] = visible ? v : -INFINITY;
        }
    }
    __syncthreads();

    // 3. Online softmax: 4 rows per warp, 8 lanes per row, 8 keys per lane.
    {
      const int r = warp * 4 + lane / 8, c0 = (lane % 8) * 8;
      float v[8], mx = -INFINITY;
#pragma unroll
      for (int i = 0; i < 8; ++i) { v[i] = ss[r * L::kSLd + c0 + i]; mx = fmaxf(mx, v[i]); }
#pragma unroll
      for (int o2 = 4; o2 > 0; o2 >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o2));
      const float m_old = row_m[r], m_new = fmaxf(m_old, mx);
      float sum = 0.0f;
      uint32_t pw[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float e0 = m_new == -INFINITY ? 0.0f : __expf(v[2 * i] - m_new);
        const float e1 = m_new == -INFINITY ? 0.0f : __expf(v[2 * i + 1] - m_new);
        // The sum uses the values the PV MMA sees (BF16), so O / l stays a
        // convex combination of V rows.
        const __nv_bfloat162 b = __floats2bfloat162_rn(e0, e1);
        const float2 f = __bfloat1622float2(b);
        sum += f.x + f.y;
        pw[i] = *reinterpret_cast<const uint32_t*>(&b);
      }
#pragma unroll
      for (int o2 = 4; o2 > 0; o2 >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o2);
      *reinterpret_cast<uint4*>(pb + r * L::kPLd + c0) = make_uint4(pw[0], pw[1], pw[2], pw[3]);
      __syncwarp();
      if (lane % 8 == 0) {
        const float corr = m_new == -INFINITY ? 1.0f : __expf(m_old - m_new);  // 0 when m_old is -inf
        row_corr[r] = corr;
        row_l[r] = row_l[r] * corr + sum;
        row_m[r] = m_new;
      }
    }
    __syncthreads();

    // 4. O = O * corr + P V for rows wr.. and head-dim quarter wc.
    {
      const float c_lo = row_corr[wr + g], c_hi = row_corr[wr + g + 8];
#pragma unroll
      for (int i = 0; i < kOTiles; ++i) { o[i][0] *= c_lo; o[i][1] *= c_lo; o[i][2] *= c_hi; o[i][3] *= c_hi; }
#pragma unroll
      for (int kk = 0; kk < kFaKeys; kk += 16) {
        uint32_t a[4];
        ldsm_x4(a, pb + (wr + (lane % 16)) * L::kPLd + kk + (lane / 16) * 8);
#pragma unroll
        for (int i = 0; i < kOTiles; i += 2) {
          const int d = wc * (D / 4) + i * 8;
          uint32_t b[4];
          ldsm_x4_t(b, vs + (kk + (lane % 8) + ((lane / 8) % 2) * 8) * L::kLd + d + (lane / 16) * 8);
          mma_bf16(o[i], a, b[0], b[1]);
          mma_bf16(o[i + 1], a, b[2], b[3]);
        }
      }
    }
  }
  __syncthreads();

  // Epilogue: O / l times v_scale; rows that saw no key write zeros.
  const float l_lo = row_l[wr + g], l_hi = row_l[wr + g + 8];
  const float inv_lo = l_lo > 0.0f ? p.v_scale / l_lo : 0.0f, inv_hi = l_hi > 0.0f ? p.v_scale / l_hi : 0.0f;
#pragma unroll
  for (int i = 0; i < kOTiles; ++i) {
    const int d = wc * (D / 4) + i * 8 + tq * 2;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = wr + g + h * 8;
      if (r >= rows) continue;
      const float inv = h ? inv_hi : inv_lo;
      const int64_t at = (row0 + r) * p.out.s0 + qh * p.out.s1 + d;
      store_from_float(p.out.data, p.out.dtype, at, o[i][2 * h] * inv);
      store_from_float(p.out.data, p.out.dtype, at + 1, o[i][2 * h + 1] * inv);
    }
  }
}

template <int D>
int launch_fa(cudaStream_t st, const AttentionProblem& p, const int4* tiles, const int32_t* num_tiles, unsigned max_tiles) {
  const size_t smem = FaSmem<D>::bytes;
  static bool attr_set = false;  // per process: the attribute is per function
  if (!attr_set) {
    if (cudaError_t e = cudaFuncSetAttribute(flash_prefill_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)))
      return static_cast<int>(e);
    attr_set = true;
  }
  flash_prefill_kernel<D><<<dim3(max_tiles, static_cast<unsigned>(p.q.d1)), kFaThreads, smem, st>>>(p, tiles, num_tiles);
  return last_error();
}

}  // namespace

bool attention_prefill_supported(const AttentionProblem& p, int32_t max_query_len) {
  const bool dim_ok = p.q.d2 == 256 || p.q.d2 == 512 || p.q.d2 == 128;
  const bool cache_ok = p.cache_dtype == SEATRT_DTYPE_F8_E4M3 || p.cache_dtype == SEATRT_DTYPE_BF16;
  return max_query_len >= kAttentionPrefillMinRows && dim_ok && cache_ok &&
         (p.q.dtype == SEATRT_DTYPE_BF16 || p.q.dtype == SEATRT_DTYPE_F32);
}

size_t attention_prefill_workspace_bytes(const AttentionProblem& p) {
  return 256 + sizeof(int4) * static_cast<size_t>(ceil_div(p.q.d0, kFaRows) + p.num_seqs);
}

int launch_attention_prefill(Stream s, const AttentionProblem& p, void* workspace) {
  if (p.q.d0 == 0) return 0;
  cudaStream_t st = cudaStream_t(s);
  auto* num_tiles = static_cast<int32_t*>(workspace);
  auto* tiles = reinterpret_cast<int4*>(static_cast<char*>(workspace) + 256);
  const unsigned max_tiles = static_cast<unsigned>(ceil_div(p.q.d0, kFaRows) + p.num_seqs);
  fa_tiles_kernel<<<1, 32, 0, st>>>(p.query_start, p.num_seqs, p.q.d0, max_tiles, tiles, num_tiles);
  if (int e = last_error()) return e;
  if (max_tiles <= 65535u && attention_prefill_wgmma_supported(p))
    return launch_attention_prefill_wgmma(st, p, tiles, num_tiles, max_tiles);
  if (p.q.d2 == 128) return launch_fa<128>(st, p, tiles, num_tiles, max_tiles);
  if (p.q.d2 == 256) return launch_fa<256>(st, p, tiles, num_tiles, max_tiles);
  return launch_fa<512>(st, p, tiles, num_tiles, max_tiles);
}

}  // namespace seatrt::cuda
