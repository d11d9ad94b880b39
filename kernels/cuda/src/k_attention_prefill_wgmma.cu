// Prefill attention on Hopper's warpgroup MMA (wgmma) for the model's head
// dims: 256 (sliding layers) and 512 (full layers), with K and V caches or
// one tensor (V = K).  Same contract as k_attention_prefill.cu's mma.sync
// kernel (paged F8_E4M3 or BF16 cache, causal, sliding window, softcap,
// GQA, BF16 or F32 q, P rounded to 16 bits for the second MMA), which stays
// for head dim 128, caches not 16-byte aligned, and
// SEATRT_PREFILL_ATTENTION=mma.
//
// Why: the mma.sync kernel reloads every MMA operand through ldmatrix and
// is bound by shared-memory bandwidth at 76 (window) / 120 (full) TFLOP/s
// (NOTES-prefill.md run 7).  wgmma reads K and V straight from shared
// memory for the whole warpgroup, and P never leaves registers.
//
// MMA input type: FP16 over an F8_E4M3 cache (an E4M3 value is exact in
// FP16, and one cvt makes two, where BF16 takes four instructions a pair;
// q gets 10 significant bits instead of 8, P too), BF16 over a BF16 cache.
// An FP16 q tile is scaled by a power of two so it cannot overflow.
//
// Block: one tile of up to 64 query rows of one sequence and one q head
// (fa_tiles_kernel's list, taken longest first), two warpgroups.  Each
// warpgroup owns half of the head dim: it computes S over its half (S =
// Q[:, half] K[:, half]^T, m64n64k16), the halves are summed through shared
// memory (both warpgroups then hold the same S: fp32 addition commutes),
// and each keeps O for its half of the columns (64 x D/2 fp32 in registers).
// Per step of 64 keys (32 for head dim 512 with two caches):
//  1. the step's raw cache rows (prefetched by cp.async during the last
//     step) become 16-bit K (and V) tiles in the 128-byte swizzle, unscaled
//     (k_scale multiplies the scores and v_scale the output);
//  2. the next step's raw rows start streaming in;
//  3. S partials by wgmma, exchanged, summed; scale, softcap and masks (only
//     on steps where some key is hidden from some row); online softmax in
//     registers (a row's 64 scores sit in the 4 lanes of a quad);
//  4. P rounded to 16-bit pairs is the A fragment of O += P V (m64nNk16
//     with V read N-major: the keys are V's rows).  Where two V tiles fit
//     in shared memory, this MMA runs on while the next step's rows are
//     converted; the next step's wait for its S covers it.
// Shared memory (1024-byte aligned tiles of 64 rows x 128 bytes, "slabs"):
// Q, K, V (two-tensor layers), the raw rows of the next step, the S
// exchange and the key offsets: 162-226 KiB, one block per SM.
// (Gemma-4's full layers store K and V apart: V is k_proj's output under
// v_norm without RoPE, K under k_norm with RoPE.)
#include <cstdlib>
#include <cstring>

#include "device_common.cuh"
#include "gemm_wgmma.cuh"
#include "prefill.hpp"
#include "prefill_attention.hpp"
#include "wgmma_attention.cuh"

namespace seatrt::cuda {
namespace {

constexpr int kRows = 64, kThreads = 256;
constexpr uint32_t kSlab = 64 * 128;  // bytes of a Q slab: 64 rows x 64 16-bit elements

// Keys per step: 64, or 32 for head-dim-512 layers with K and V caches
// (two 64-key tiles of 512 columns and their raw rows would not fit).
template <int D, bool kTwo>
constexpr int kKeyStep = D == 512 && kTwo ? 32 : 64;

// Byte offsets from the block's 1024-aligned base.  K and V slabs hold kN
// rows (keys) of 64 elements; the raw buffer holds a step's cache rows.
// Two V tiles where they fit (kVTiles): step j's P V then runs while step
// j+1's rows are converted into the other tile.
template <int D, bool kTwo, bool kF8>
struct WgSmem {
  static constexpr uint32_t kN = kKeyStep<D, kTwo>, kSlabs = D / 64, kKSlab = kN * 128;
  static constexpr uint32_t kTile = kSlabs * kKSlab;  // one K or V tile
  static constexpr uint32_t kRaw = (kTwo ? 2 : 1) * kN * D * (kF8 ? 1 : 2);
  static constexpr uint32_t kRest = kSlabs * kSlab + kTile + kRaw + 2 * kRows * kN * 4 + 2 * kN * 8 + 32 + 1024;
  static constexpr uint32_t kVTiles = kTwo ? (kRest + 2 * kTile <= 227 * 1024 ? 2 : 1) : 0;
  static constexpr uint32_t q = 0;
  static constexpr uint32_t k = q + kSlabs * kSlab;
  static constexpr uint32_t v = k + kTile;
  static constexpr uint32_t raw = v + kVTiles * kTile;
  static constexpr uint32_t xs = raw + kRaw;
  static constexpr uint32_t koff = xs + 2 * kRows * kN * 4;
  static constexpr uint32_t flags = koff + 2 * kN * 8;  // 2 x 2 ints: step_mapped; 1: the Q tile's max
  static constexpr uint32_t bytes = flags + 32;
  static constexpr uint32_t alloc = bytes + 1024;  // + alignment slack
  static_assert(alloc <= 227 * 1024, "one block per SM must fit");
};

// 8 E4M3 bytes as 8 FP16 values (exact: E4M3 lies inside FP16's range
// with fewer significant bits; NaN stays NaN), unscaled.
__device__ __forceinline__ uint4 e4m3x8_to_f16(uint2 raw) {
  const uint32_t w[2] = {raw.x, raw.y};
  uint4 r;
  uint32_t* o = reinterpret_cast<uint32_t*>(&r);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w[i / 2] >> (16 * (i % 2))), __NV_E4M3);
    o[i] = uint32_t(h.x) | (uint32_t(h.y) << 16);
  }
  return r;
}

constexpr float kLog2e = 1.4426950408889634f;

// 2^x (MUFU; 2^-inf = 0), as __expf uses.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Two values as the MMA's input pair (FP16 or BF16, round to nearest).
template <bool kF16>
__device__ __forceinline__ uint32_t pack_pair(float lo, float hi) {
  if constexpr (kF16) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 b = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&b);
  }
}

// Two probabilities packed so; `sum` takes the rounded values, the ones the
// PV MMA sees, so O / l stays a convex combination of V rows.
template <bool kF16>
__device__ __forceinline__ uint32_t p_pair(float lo, float hi, float& sum) {
  const uint32_t w = pack_pair<kF16>(lo, hi);
  float2 f;
  if constexpr (kF16) f = __half22float2(*reinterpret_cast<const __half2*>(&w));
  else f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w));
  sum += f.x + f.y;
  return w;
}

// 8 consecutive q values from F32 or BF16 rows as floats; `vec`: 16-byte
// aligned (one or two vector loads).
__device__ __forceinline__ void q8(const View3& q, int64_t at, bool vec, float* f) {
  if (q.dtype == SEATRT_DTYPE_F32) {
    const float* src = static_cast<const float*>(q.data) + at;
    if (vec) {
      const float4 a = reinterpret_cast<const float4*>(src)[0], b = reinterpret_cast<const float4*>(src)[1];
      f[0] = a.x; f[1] = a.y; f[2] = a.z; f[3] = a.w; f[4] = b.x; f[5] = b.y; f[6] = b.z; f[7] = b.w;
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) f[j] = src[j];
    }
  } else {
    const __nv_bfloat16* src = static_cast<const __nv_bfloat16*>(q.data) + at;
    uint4 v;
    if (vec) {
      v = *reinterpret_cast<const uint4*>(src);
    } else {
      __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&v);
#pragma unroll
      for (int j = 0; j < 8; ++j) e[j] = src[j];
    }
    const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&v);
#pragma unroll
    for (int j = 0; j < 8; ++j) f[j] = __bfloat162float(e[j]);
  }
}

template <int D, bool kTwo, bool kF8>
__global__ void __launch_bounds__(kThreads, 1)
    flash_prefill_wgmma_kernel(AttentionProblem p, const int4* tiles, const int32_t* num_tiles) {
  using L = WgSmem<D, kTwo, kF8>;
  constexpr bool kOverlap = L::kVTiles == 2;  // step j's P V runs on into step j+1
  constexpr int kHalf = D / 2;        // head-dim columns of a warpgroup
  constexpr int kOAcc = kHalf / 2;    // its O accumulators per thread (64 x kHalf / 128)
  constexpr int kEsz = kF8 ? 1 : 2;   // bytes of a cache element
  constexpr int kChunks = D / 8;      // 8-element chunks of a row
  constexpr int kKeys = kKeyStep<D, kTwo>, kS = kKeys / 2;  // keys per step; S accumulators per thread
  constexpr uint32_t kKSlab = L::kKSlab;
  extern __shared__ __align__(1024) unsigned char wa_dyn[];
  const int n_tiles = *num_tiles;
  if (int(blockIdx.y) >= n_tiles) return;
  const uint32_t base = (mma::smem_addr(wa_dyn) + 1023u) & ~1023u;  // the swizzle is a function of the address
  unsigned char* const sm = wa_dyn + (base - mma::smem_addr(wa_dyn));
  auto* koff = reinterpret_cast<int64_t*>(sm + L::koff);
  auto* xs = reinterpret_cast<float4*>(sm + L::xs);
  auto* step_mapped = reinterpret_cast<int*>(sm + L::flags);
  int* q_max_bits = step_mapped + 4;

  const int4 tile = tiles[n_tiles - 1 - int(blockIdx.y)];  // longest first: the last rows see the most keys
  const int seq = tile.x, rows = tile.z;
  const int64_t row0 = tile.y;
  const int qh = blockIdx.x, q_heads = static_cast<int>(p.q.d1);
  const int kvh = qh / (q_heads / p.kv_heads);
  const int t = threadIdx.x, wgi = t >> 7, tw = t & 127, lane = t & 31, g = lane >> 2, tq = lane & 3;
  const int r_lo = ((tw >> 5) << 4) + g, r_hi = r_lo + 8;  // this thread's two rows of S and O
  const int64_t seq_rows = p.query_start[seq + 1] - p.query_start[seq];
  const int64_t pos0 = p.seq_lens[seq] - seq_rows + (row0 - p.query_start[seq]);  // position of tile row 0
  const int32_t* table = p.block_tables + seq * p.block_table_stride;

  // Q tile as slabs of the MMA's type (rows past the tile's end are zeros),
  // by 16-byte loads where the rows allow them.  FP16 (F8 caches, whose
  // values FP16 holds exactly): the tile is first scaled by 2^-q_exp so its
  // largest |q| stays below 2^15 (exact, a power of two; 2^q_exp goes back
  // into the score scale), so no q can overflow FP16.
  const bool q_vec = reinterpret_cast<uintptr_t>(p.q.data) % 16 == 0 && p.q.s0 % 8 == 0 && p.q.s1 % 8 == 0;
  int q_exp = 0;
  if constexpr (kF8) {
    if (t == 0) *q_max_bits = 0;
    __syncthreads();
    float mx = 0.0f;
    for (int i = t; i < rows * kChunks; i += kThreads) {
      float f[8];
      q8(p.q, (row0 + i / kChunks) * p.q.s0 + qh * p.q.s1 + (i % kChunks) * 8, q_vec, f);
#pragma unroll
      for (int j = 0; j < 8; ++j) mx = fmaxf(mx, fabsf(f[j]));  // NaN is skipped; it stays NaN below
    }
    atomicMax(q_max_bits, __float_as_int(mx));  // non-negative floats order as their bits
    __syncthreads();
    int e2 = 0;
    frexpf(__int_as_float(*q_max_bits), &e2);  // max |q| < 2^e2
    q_exp = e2 > 15 ? e2 - 15 : 0;
  }
  const float q_mul = ldexpf(1.0f, -q_exp);
  for (int i = t; i < kRows * kChunks; i += kThreads) {
    const int r = i / kChunks, c = i % kChunks;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (r < rows) {
      float f[8];
      q8(p.q, (row0 + r) * p.q.s0 + qh * p.q.s1 + c * 8, q_vec, f);
      uint32_t* w = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
      for (int j = 0; j < 4; ++j) w[j] = pack_pair<kF8>(f[2 * j] * q_mul, f[2 * j + 1] * q_mul);
    }
    *reinterpret_cast<uint4*>(sm + L::q + (c / 8) * kSlab + wg::swz(r, c % 8)) = v;
  }

  // The keys the tile sees: [first, last], as in the mma.sync kernel (keys
  // past the block table are unmapped, so a malformed seq_lens cannot make
  // the walk longer than the table).
  int64_t last = pos0 + rows - 1;
  if (last > p.max_blocks_per_seq * p.block_size - 1) last = p.max_blocks_per_seq * p.block_size - 1;
  int64_t first = 0;
  if (p.window > 0 && pos0 - p.window + 1 > 0) first = pos0 - p.window + 1;

  // (Key positions are below max_blocks_per_seq * block_size, an int32.)
  auto key_offset = [&](int64_t j) -> int64_t {
    if (j > last) return -1;
    const uint32_t bs = uint32_t(p.block_size), jj = uint32_t(j), bi = jj / bs;
    if (bi >= p.max_blocks_per_seq) return -1;
    const int32_t blk = table[bi];
    if (blk < 0 || blk >= p.num_blocks) return -1;
    return ((int64_t(blk) * bs + (jj - bi * bs)) * p.kv_heads + kvh) * D;
  };
  // Key offsets of a step into koff buffer b, and whether each of its
  // 32-key halves is mapped throughout (step_mapped[2b], [2b + 1]).
  auto fill_offsets = [&](int64_t j0, int b) {
    if (t < kKeys) {
      const int64_t off = key_offset(j0 + t);
      koff[b * kKeys + t] = off;
      const unsigned all = __ballot_sync(0xffffffffu, off >= 0);
      if (lane == 0) step_mapped[b * 2 + (t >> 5)] = all == 0xffffffffu;
    }
  };
  // Starts the copies of the raw rows of the keys in koff buffer b (K, then
  // V), 16 bytes each; unmapped keys read as zeros.
  auto issue = [&](int b) {
    constexpr uint32_t kPerRow = D * kEsz / 16, kCopies = (kTwo ? 2 : 1) * kKeys * kPerRow;
    static_assert(kCopies % kThreads == 0, "whole passes");
#pragma unroll
    for (uint32_t it = 0; it < kCopies / kThreads; ++it) {
      const uint32_t i = uint32_t(t) + it * kThreads, c = i % kPerRow, kr = (i / kPerRow) % kKeys,
                     tensor = i / (kKeys * kPerRow);
      const int64_t off = koff[b * kKeys + int(kr)];
      const unsigned char* src = static_cast<const unsigned char*>(tensor ? p.v_cache : p.k_cache);
      mma::cp_async16(base + L::raw + (tensor * kKeys + kr) * D * kEsz + c * 16,
                      src + (off < 0 ? 0 : off * kEsz + c * 16), off >= 0);
    }
    mma::cp_commit();
  };

  float o[kOAcc], s[kS];
#pragma unroll
  for (int i = 0; i < kOAcc; ++i) o[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < kS; ++i) s[i] = 0.0f;
  float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.0f, l_hi = 0.0f;
  const float score_scale = p.scale * p.k_scale * ldexpf(1.0f, q_exp);
  const bool plain = p.softcap <= 0.0f && score_scale > 0.0f;
  const float c2 = plain ? score_scale * kLog2e : kLog2e;
  const uint32_t v_half = uint32_t(wgi * (kHalf / 64)) * kKSlab;  // this warpgroup's columns in a V tile

  if (first <= last) fill_offsets(first, 0);
  __syncthreads();
  if (first <= last) issue(0);

  int b = 0;  // koff buffer of the current step
  for (int64_t j0 = first; j0 <= last; j0 += kKeys, b ^= 1) {
    mma::cp_wait<0>();
    // This step's raw rows are in; the last step's S MMAs and exchange reads
    // are done, and so is the P V of the step before it, which read the V
    // tile this step fills (kOverlap: the last step's P V may still run).
    __syncthreads();
    if (j0 + kKeys <= last) fill_offsets(j0 + kKeys, b ^ 1);
    // 1. Raw rows -> 16-bit K (and V) slabs: an F8 thread takes 16 raw
    // bytes (two 8-element chunks of one row) per pass, a BF16 one 16 bytes.
    {
      constexpr uint32_t kUnit = kF8 ? 2 : 1, kUnitsPerRow = kChunks / kUnit;
      constexpr uint32_t kUnits = (kTwo ? 2 : 1) * kKeys * kUnitsPerRow;
      static_assert(kUnits % kThreads == 0, "whole passes");
#pragma unroll
      for (uint32_t it = 0; it < kUnits / kThreads; ++it) {
        const uint32_t i = uint32_t(t) + it * kThreads, u = i % kUnitsPerRow, kr = (i / kUnitsPerRow) % kKeys,
                       tensor = i / (kKeys * kUnitsPerRow), c = u * kUnit;
        const uint4 in = *reinterpret_cast<const uint4*>(sm + L::raw + (tensor * kKeys + kr) * D * kEsz + u * 16);
        unsigned char* slab = sm + (tensor ? L::v + (kOverlap ? b : 0) * L::kTile : L::k) + (c / 8) * kKSlab;
        if constexpr (kF8) {
          *reinterpret_cast<uint4*>(slab + wg::swz(int(kr), int(c % 8))) = e4m3x8_to_f16(make_uint2(in.x, in.y));
          *reinterpret_cast<uint4*>(slab + wg::swz(int(kr), int(c % 8) + 1)) = e4m3x8_to_f16(make_uint2(in.z, in.w));
        } else {
          *reinterpret_cast<uint4*>(slab + wg::swz(int(kr), int(c % 8))) = in;
        }
      }
    }
    wg::fence_proxy_async();  // this thread's K/V (and the prologue's Q) stores, visible to the tensor cores
    __syncthreads();
    // 2. The next step's rows stream in while this one computes.
    if (j0 + kKeys <= last) issue(b ^ 1);

    // 3. S over this warpgroup's half of the head dim.
    wg::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kHalf / 16; ++ks) {
      const int d0 = wgi * kHalf + ks * 16;
      const uint64_t dq = wg::desc(base + L::q + uint32_t(d0 / 64) * kSlab + uint32_t(d0 % 64) * 2);
      const uint64_t dk = wg::desc(base + L::k + uint32_t(d0 / 64) * kKSlab + uint32_t(d0 % 64) * 2);
      if constexpr (kKeys == 32) wga::wgmma_ss_m64n32k16<kF8>(s, dq, dk, ks > 0);
      else wga::wgmma_ss_m64n64k16<kF8>(s, dq, dk, ks > 0);
    }
    wg::wgmma_commit();
    wg::wgmma_wait0();  // S, and (kOverlap) the last step's P V
#pragma unroll
    for (int i = 0; i < kS; ++i) wg::fence_reg(s[i]);
    if constexpr (kOverlap) {
#pragma unroll
      for (int i = 0; i < kOAcc; ++i) wg::fence_reg(o[i]);
    }
    // The exchange, in fragment order: thread tw of one warpgroup holds the
    // same (row, key) elements as thread tw of the other.
#pragma unroll
    for (int i = 0; i < kS / 4; ++i)
      xs[(wgi * (kS / 4) + i) * 128 + tw] = make_float4(s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kS / 4; ++i) {
      const float4 other = xs[((wgi ^ 1) * (kS / 4) + i) * 128 + tw];
      s[4 * i] += other.x;
      s[4 * i + 1] += other.y;
      s[4 * i + 2] += other.z;
      s[4 * i + 3] += other.w;
    }

    // Scores in log2 units times c2 (scale * k_scale * log2 e, folded into
    // the exponent's FMA): with no softcap, raw S keeps its order (c2 > 0)
    // and the row maxima are taken on it; a softcap is applied first.
    if (!plain) {
#pragma unroll
      for (int i = 0; i < kS; ++i)
        s[i] = p.softcap > 0.0f ? p.softcap * tanhf(s[i] * score_scale / p.softcap) : s[i] * score_scale;
    }
    // Masks only where a key of the step may be hidden from a row (the
    // diagonal step, the window's edge, unmapped keys); element 4i + e is
    // row (e < 2 ? r_lo : r_hi), key j0 + 8i + 2tq + (e & 1).  Rows past the
    // tile's end have zero q and finite scores, and are never stored.
    const bool mapped = step_mapped[b * 2] && (kKeys == 32 || step_mapped[b * 2 + 1]);
    const bool interior = mapped && j0 + kKeys - 1 <= pos0 && (p.window <= 0 || j0 > pos0 + rows - 1 - p.window);
    if (!interior) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t pos = pos0 + (h ? r_hi : r_lo);
        // The keys of this step the row sees: [lo, hi] relative to j0.
        const int64_t hi64 = pos - j0, lo64 = p.window > 0 ? pos - p.window + 1 - j0 : -1;
        const int hi = hi64 < -1 ? -1 : (hi64 > kKeys ? kKeys : int(hi64));
        const int lo = lo64 < 0 ? 0 : (lo64 > kKeys ? kKeys : int(lo64));
#pragma unroll
        for (int i = 0; i < kKeys / 8; ++i)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int c = 8 * i + 2 * tq + e;
            const bool visible = c >= lo && c <= hi && (mapped || koff[b * kKeys + c] >= 0);
            if (!visible) s[4 * i + 2 * h + e] = -INFINITY;
          }
      }
    }
    float mx_lo = -INFINITY, mx_hi = -INFINITY;
#pragma unroll
    for (int i = 0; i < kKeys / 8; ++i) {
      mx_lo = fmaxf(mx_lo, fmaxf(s[4 * i], s[4 * i + 1]));
      mx_hi = fmaxf(mx_hi, fmaxf(s[4 * i + 2], s[4 * i + 3]));
    }
#pragma unroll
    for (int x = 1; x <= 2; x <<= 1) {
      mx_lo = fmaxf(mx_lo, __shfl_xor_sync(0xffffffffu, mx_lo, x));
      mx_hi = fmaxf(mx_hi, __shfl_xor_sync(0xffffffffu, mx_hi, x));
    }
    const float mn_lo = fmaxf(m_lo, mx_lo), mn_hi = fmaxf(m_hi, mx_hi);
    // exp2(s * c2 - sub): sub is 0 for a row that has seen no key yet (all
    // its scores are -inf, and so are its p).
    const float sub_lo = mn_lo == -INFINITY ? 0.0f : mn_lo * c2, sub_hi = mn_hi == -INFINITY ? 0.0f : mn_hi * c2;
    const float corr_lo = fast_exp2(m_lo * c2 - sub_lo), corr_hi = fast_exp2(m_hi * c2 - sub_hi);  // 0 from -inf
    m_lo = mn_lo;
    m_hi = mn_hi;
    // 4. P as the A fragments of the four 16-key MMA steps: a0 (row lo,
    // keys 2tq..), a1 (row hi, same keys), a2 / a3 the same 8 keys on.
    uint32_t pa[kKeys / 16][4];
    float sum_lo = 0.0f, sum_hi = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk)
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // h: the 8-key half of the 16
        const float* sv = s + 8 * kk + 4 * h;
        const float e0 = fast_exp2(fmaf(sv[0], c2, -sub_lo)), e1 = fast_exp2(fmaf(sv[1], c2, -sub_lo));
        const float e2 = fast_exp2(fmaf(sv[2], c2, -sub_hi)), e3 = fast_exp2(fmaf(sv[3], c2, -sub_hi));
        pa[kk][2 * h] = p_pair<kF8>(e0, e1, sum_lo);
        pa[kk][2 * h + 1] = p_pair<kF8>(e2, e3, sum_hi);
      }
#pragma unroll
    for (int x = 1; x <= 2; x <<= 1) {
      sum_lo += __shfl_xor_sync(0xffffffffu, sum_lo, x);
      sum_hi += __shfl_xor_sync(0xffffffffu, sum_hi, x);
    }
    l_lo = l_lo * corr_lo + sum_lo;
    l_hi = l_hi * corr_hi + sum_hi;
#pragma unroll
    for (int i = 0; i < kOAcc; i += 4) {
      o[i] *= corr_lo;
      o[i + 1] *= corr_lo;
      o[i + 2] *= corr_hi;
      o[i + 3] *= corr_hi;
    }
    wg::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      const uint32_t v_tile = base + (kTwo ? L::v + (kOverlap ? b : 0) * L::kTile : L::k) + v_half;
      const uint64_t dv = wga::desc_nmajor(v_tile + uint32_t(kk) * 16 * 128, kKSlab, 1024);
      if constexpr (D == 256) wga::wgmma_rs_m64n128k16_nmajor<kF8>(o, pa[kk], dv);
      else wga::wgmma_rs_m64n256k16_nmajor<kF8>(o, pa[kk], dv);
    }
    wg::wgmma_commit();
    if constexpr (!kOverlap) {  // the next step overwrites the V this P V reads
      wg::wgmma_wait0();
#pragma unroll
      for (int i = 0; i < kOAcc; ++i) wg::fence_reg(o[i]);
    }
  }
  if constexpr (kOverlap) {
    wg::wgmma_wait0();
#pragma unroll
    for (int i = 0; i < kOAcc; ++i) wg::fence_reg(o[i]);
  }

  // O / l times v_scale; rows that saw no key write zeros.  Each thread's
  // two columns are adjacent: one 4- or 8-byte store where aligned.
  const bool out_pairs = reinterpret_cast<uintptr_t>(p.out.data) % 8 == 0 && p.out.s0 % 2 == 0 && p.out.s1 % 2 == 0;
  const float inv_lo = l_lo > 0.0f ? p.v_scale / l_lo : 0.0f, inv_hi = l_hi > 0.0f ? p.v_scale / l_hi : 0.0f;
#pragma unroll
  for (int i = 0; i < kOAcc / 4; ++i) {
    const int d = wgi * kHalf + 8 * i + 2 * tq;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = h ? r_hi : r_lo;
      if (r >= rows) continue;
      const float inv = h ? inv_hi : inv_lo;
      const int64_t at = (row0 + r) * p.out.s0 + qh * p.out.s1 + d;
      const float v0 = o[4 * i + 2 * h] * inv, v1 = o[4 * i + 2 * h + 1] * inv;
      if (out_pairs && p.out.dtype == SEATRT_DTYPE_BF16) {
        *reinterpret_cast<__nv_bfloat162*>(static_cast<__nv_bfloat16*>(p.out.data) + at) = __floats2bfloat162_rn(v0, v1);
      } else if (out_pairs && p.out.dtype == SEATRT_DTYPE_F32) {
        *reinterpret_cast<float2*>(static_cast<float*>(p.out.data) + at) = make_float2(v0, v1);
      } else {
        store_from_float(p.out.data, p.out.dtype, at, v0);
        store_from_float(p.out.data, p.out.dtype, at + 1, v1);
      }
    }
  }
}

template <int D, bool kTwo, bool kF8>
int launch_wgmma(cudaStream_t st, const AttentionProblem& p, const int4* tiles, const int32_t* num_tiles,
                 unsigned max_tiles) {
  constexpr uint32_t smem = WgSmem<D, kTwo, kF8>::alloc;
  static bool opted_in = false;  // per instantiation: the attribute is per function
  if (!opted_in) {
    if (cudaError_t e = cudaFuncSetAttribute(flash_prefill_wgmma_kernel<D, kTwo, kF8>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)))
      return static_cast<int>(e);
    opted_in = true;
  }
  // x: q heads, y: tiles, so every head's longest tile is dispatched first.
  flash_prefill_wgmma_kernel<D, kTwo, kF8>
      <<<dim3(static_cast<unsigned>(p.q.d1), max_tiles), kThreads, smem, st>>>(p, tiles, num_tiles);
  return last_error();
}

}  // namespace

bool attention_prefill_wgmma_supported(const AttentionProblem& p) {
  static const bool off = [] {
    const char* v = std::getenv("SEATRT_PREFILL_ATTENTION");
    return v != nullptr && std::strcmp(v, "mma") == 0;
  }();
  const bool shape_ok = p.q.d2 == 256 || p.q.d2 == 512;
  const bool aligned = reinterpret_cast<uintptr_t>(p.k_cache) % 16 == 0 && reinterpret_cast<uintptr_t>(p.v_cache) % 16 == 0;
  const bool cache_ok = p.cache_dtype == SEATRT_DTYPE_F8_E4M3 || p.cache_dtype == SEATRT_DTYPE_BF16;
  return !off && shape_ok && aligned && cache_ok && p.q.d1 % p.kv_heads == 0;
}

int launch_attention_prefill_wgmma(cudaStream_t st, const AttentionProblem& p, const int4* tiles,
                                   const int32_t* num_tiles, unsigned max_tiles) {
  if (max_tiles > 65535u) return static_cast<int>(cudaErrorInvalidConfiguration);  // the grid's y limit
  const bool two = p.v_cache != p.k_cache, f8 = p.cache_dtype == SEATRT_DTYPE_F8_E4M3;
  if (p.q.d2 == 512 && two) return f8 ? launch_wgmma<512, true, true>(st, p, tiles, num_tiles, max_tiles)
                                      : launch_wgmma<512, true, false>(st, p, tiles, num_tiles, max_tiles);
  if (p.q.d2 == 512) return f8 ? launch_wgmma<512, false, true>(st, p, tiles, num_tiles, max_tiles)
                               : launch_wgmma<512, false, false>(st, p, tiles, num_tiles, max_tiles);
  if (two) return f8 ? launch_wgmma<256, true, true>(st, p, tiles, num_tiles, max_tiles)
                     : launch_wgmma<256, true, false>(st, p, tiles, num_tiles, max_tiles);
  return f8 ? launch_wgmma<256, false, true>(st, p, tiles, num_tiles, max_tiles)
            : launch_wgmma<256, false, false>(st, p, tiles, num_tiles, max_tiles);
}

}  // namespace seatrt::cuda
