// The tensor-core GEMM for many BF16 activation rows (prefill), shared by the
// large-M linear (k_gemm_tc.cu) and the grouped MoE (k_moe_grouped.cu).
//
// One block of 8 warps computes a 128 x 128 tile of out = x W^T, K in steps
// of 64.  Each step the block decodes its 128 x 64 weight slice to BF16 in
// shared memory ONCE (exact: E2M1 * E4M3 has at most 6 significant bits) and
// stages the 128 x 64 activation slice; the warps (4 along M x 2 along N,
// 32 x 64 each) run 16x16x16 BF16 MMAs (nvcuda::wmma) into fp32
// accumulators.  Software pipelining: the next step's global loads (raw FP4
// bytes, scales, activations) are issued into registers before the current
// step's MMAs, so memory latency hides behind the tensor cores.
//
// GLU mode (MoE gate/up): the tile's 128 weight rows are 64 `gate` rows and
// the same 64 `up` rows; a warp holds gate and up accumulators of the same
// output columns in identically laid out fragments, so act(gate) * up is
// formed in registers and only the product leaves the kernel.
//
// Rows are addressed through TcRows (plain linear: identity; MoE: the
// grouped assignment lists), so the same core serves every caller.
#pragma once

#include <mma.h>

#include "gemv.cuh"

namespace seatrt::cuda {

constexpr int kTcBM = 128, kTcBN = 128, kTcBK = 64, kTcLd = kTcBK + 8, kTcThreads = 256;

enum class TcMode : int32_t { Linear = 0, MoeGateUp = 1, MoeDown = 2 };

// One row tile of the grouped MoE GEMMs: the expert, its first position in
// the expert-sorted assignment list, and how many rows (<= kTcBM).
struct TcTile {
  int32_t expert, first, rows, pad;
};

struct TcParams {
  TcMode mode = TcMode::Linear;
  WeightRef w, w_up;                     // Linear: the weight (w_up unused)
  const WeightRef* table = nullptr;      // MoE: per-expert weights (gate or down)
  const WeightRef* table_up = nullptr;   // MoE gate/up: the `up` weights
  int64_t n = 0, k = 0;                  // output features (GLU: the intermediate size), input features
  Mat x;                                 // BF16 activations
  Mat out;                               // Linear: out; gate/up: h (expert-sorted rows); down: y (per assignment)
  const TcTile* tiles = nullptr;         // MoE row tiles
  const int32_t* num_tiles = nullptr;    // device scalar
  const int32_t* sorted = nullptr;       // assignment ids grouped by expert
  int32_t x_div = 1;                     // gate/up: x row = assignment / x_div (top_k)
  const float* row_weight = nullptr;     // down: router weight per assignment
  int32_t act = 0;
  bool x_vec = false;                    // x allows 16-byte loads
  bool w_vec = false;                    // every weight allows 16-byte loads
};

// Whether a weight suits the kernel's fast path (with 16-byte data loads
// and K % 32 == 0 checked by the caller): FP4, scale rows of an even count
// (two group scales are read with one load) and 4-byte aligned scales.
inline bool tc_fast(const WeightRef& w) {
  return w.kind <= int32_t(WeightKind::Fp4Bf16Scales) && w.scale_row_elems % 2 == 0 &&
         reinterpret_cast<uintptr_t>(w.scales) % 4 == 0;
}

namespace tc {

struct Smem {
  __nv_bfloat16 a[kTcBM][kTcLd];
  __nv_bfloat16 b[kTcBN][kTcLd];
};

// Registers holding one K step's global data for this thread, loaded a step
// ahead: 4 chunks of 8 activations (rows t/8 + 32 i, columns (t%8)*8) and
// 32 FP4 weights (row t/2, columns (t%2)*32) with their two group scales.
struct Prefetch {
  uint4 a[4];
  uint4 q;
  float s0, s1;
};

__device__ __forceinline__ uint4 zero4() { return make_uint4(0u, 0u, 0u, 0u); }

// 8 activations of row `row` (nullptr: a padding row) from column kk.
__device__ __forceinline__ uint4 load_a8(const __nv_bfloat16* row, int64_t kk, int64_t k, bool vec) {
  if (!row) return zero4();
  if (vec && kk + 8 <= k) return *reinterpret_cast<const uint4*>(row + kk);
  uint4 r = zero4();
  __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&r);
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (kk + i < k) e[i] = row[kk + i];
  return r;
}

// 32 FP4 codes (16 bytes) of weight row `row` from column kk, zero past k.
__device__ __forceinline__ uint4 load_q32(const WeightRef& w, int64_t row, int64_t kk, int64_t k, bool vec) {
  const uint8_t* base = static_cast<const uint8_t*>(w.data) + row * w.data_row_bytes + kk / 2;
  if (vec && kk + 32 <= k) return __ldg(reinterpret_cast<const uint4*>(base));
  uint4 r = zero4();
  uint8_t* e = reinterpret_cast<uint8_t*>(&r);
  for (int i = 0; i < 16; ++i)
    if (kk + 2 * i < k) e[i] = base[i];  // k is a multiple of 16: whole bytes
  return r;
}

// 8 FP4 codes of one word, times `s`, to 8 BF16 values (4 packed words).
__device__ __forceinline__ void decode8(uint32_t q, float s, uint32_t* out) {
  float v[8];
  unpack8(q, v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * i] * s, v[2 * i + 1] * s);
    out[i] = *reinterpret_cast<uint32_t*>(&h);
  }
}

}  // namespace tc

// The block's job: which weights, which activation and output rows.
struct TcJob {
  WeightRef w, w_up;
  int64_t m0 = 0;    // Linear: first row; MoE: first sorted position
  int32_t rows = 0;  // valid rows of the tile
};

__device__ __forceinline__ bool tc_job(const TcParams& p, TcJob& j) {
  if (p.mode == TcMode::Linear) {
    j.w = p.w;
    j.m0 = int64_t(blockIdx.y) * kTcBM;
    const int64_t left = p.x.rows - j.m0;
    j.rows = static_cast<int32_t>(left < kTcBM ? left : kTcBM);
    return j.rows > 0;
  }
  if (int(blockIdx.y) >= *p.num_tiles) return false;
  const TcTile t = p.tiles[blockIdx.y];
  j.w = p.table[t.expert];
  if (p.mode == TcMode::MoeGateUp) j.w_up = p.table_up[t.expert];
  j.m0 = t.first;
  j.rows = t.rows;
  return true;
}

// The activation row read for tile row r (nullptr: padding).
__device__ __forceinline__ const __nv_bfloat16* tc_a_row(const TcParams& p, const TcJob& j, int r) {
  if (r >= j.rows) return nullptr;
  int64_t src = j.m0 + r;
  if (p.mode == TcMode::MoeGateUp) src = p.sorted[src] / p.x_div;
  return static_cast<const __nv_bfloat16*>(p.x.data) + src * p.x.row_stride;
}

// Stores 8 consecutive outputs (columns col..col+7 of tile row r), already
// divided by the global divisor(s).
__device__ __forceinline__ void tc_store8(const TcParams& p, const TcJob& j, int r, int64_t col, const float* v) {
  if (r >= j.rows || col >= p.n) return;
  int64_t row = j.m0 + r;
  float scale = 1.0f;
  if (p.mode == TcMode::MoeDown) {
    row = p.sorted[row];
    scale = p.row_weight[row];
  }
  const Mat& o = p.out;
  const int64_t at = row * o.row_stride + col;
  if (col + 8 <= p.n && o.dtype == SEATRT_DTYPE_BF16 && at % 8 == 0 && reinterpret_cast<uintptr_t>(o.data) % 16 == 0) {
    uint4 u;
    uint32_t* w = reinterpret_cast<uint32_t*>(&u);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * i] * scale, v[2 * i + 1] * scale);
      w[i] = *reinterpret_cast<uint32_t*>(&h);
    }
    *reinterpret_cast<uint4*>(static_cast<__nv_bfloat16*>(o.data) + at) = u;
    return;
  }
  if (col + 8 <= p.n && o.dtype == SEATRT_DTYPE_F32 && at % 4 == 0 && reinterpret_cast<uintptr_t>(o.data) % 16 == 0) {
    float4* d = reinterpret_cast<float4*>(static_cast<float*>(o.data) + at);
    d[0] = make_float4(v[0] * scale, v[1] * scale, v[2] * scale, v[3] * scale);
    d[1] = make_float4(v[4] * scale, v[5] * scale, v[6] * scale, v[7] * scale);
    return;
  }
  for (int i = 0; i < 8 && col + i < p.n; ++i) mat_store(o, row, col + i, v[i] * scale);
}

// The kernel and its launcher have internal linkage (an unnamed namespace in
// this header): each .cu file that includes it gets its own kernel and its
// own "opted in" flag.  With external linkage the flag of the inline launcher
// was shared between k_gemm_tc.cu and k_moe_grouped.cu while each file
// launched its own copy of the kernel, so the second file's copy never got
// the 72 KiB shared-memory opt-in (device run 2: cudaErrorInvalidValue).
namespace {

// kFast: every weight is FP4 with 16-byte loads, x allows 16-byte loads and
// K is a multiple of 32 (all of Gemma-4's shapes): the lean loads below,
// fewer registers and no scalar fallbacks in the K loop.
template <bool kGlu, bool kFast>
__global__ void __launch_bounds__(kTcThreads, 2) gemm_tc_kernel(TcParams p) {
  using namespace nvcuda;
  // Two K-step buffers (dynamic shared memory, 72 KiB): step i+1 is staged
  // into one while the MMAs of step i read the other, so one barrier per
  // step suffices and one warp's decode overlaps other warps' MMAs.
  extern __shared__ __align__(128) unsigned char tc_dyn[];
  tc::Smem* bufs = reinterpret_cast<tc::Smem*>(tc_dyn);
  TcJob job;
  if (!tc_job(p, job)) return;
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  const int wm = warp % 4, wn = warp / 4;
  // Output columns of this block: 128 (GLU: 64, each with a gate and an up row).
  const int64_t n0 = int64_t(blockIdx.x) * (kGlu ? kTcBN / 2 : kTcBN);

  // The activation row behind each tile row, resolved once (kept in shared
  // memory, not registers: the accumulators need those).
  __shared__ const __nv_bfloat16* arows[kTcBM];
  if (t < kTcBM) arows[t] = tc_a_row(p, job, t);
  __syncthreads();
  auto arow = [&](int i) { return arows[t / 8 + 32 * i]; };
  const int acol = (t % 8) * 8;
  const int brow = t / 2, bcol = (t % 2) * 32;
  // The weight row behind tile row `brow` (GLU: gate rows, then up rows).
  const WeightRef bw = (kGlu && brow >= kTcBN / 2) ? job.w_up : job.w;
  const int64_t wrow = n0 + (kGlu ? brow % (kTcBN / 2) : brow);
  const bool wrow_ok = wrow < p.n;
  const bool fp4 = bw.kind <= int32_t(WeightKind::Fp4Bf16Scales);

  // Fast path: this thread's weight row and scale row, resolved once.
  const uint8_t* wq_row = static_cast<const uint8_t*>(bw.data) + (wrow_ok ? wrow : 0) * bw.data_row_bytes;
  const bool e4m3 = bw.kind == int32_t(WeightKind::Fp4E4m3Scales);
  const char* ws_row = static_cast<const char*>(bw.scales) + (wrow_ok ? wrow : 0) * bw.scale_row_elems * (e4m3 ? 1 : 2);
  auto load = [&](int64_t k0, tc::Prefetch& f) {
    if constexpr (kFast) {
      const int64_t ka = k0 + acol;
#pragma unroll
      for (int i = 0; i < 4; ++i)
      {
        const __nv_bfloat16* r = arow(i);
        f.a[i] = (r && ka < p.k) ? *reinterpret_cast<const uint4*>(r + ka) : tc::zero4();
      }
      const int64_t kk = k0 + bcol;
      if (wrow_ok && kk < p.k) {
        f.q = __ldg(reinterpret_cast<const uint4*>(wq_row + kk / 2));
        if (e4m3) {
          const uint16_t two = *reinterpret_cast<const uint16_t*>(ws_row + kk / 16);
          f.s0 = e4m3_to_float(static_cast<uint8_t>(two & 0xffu)) * 16384.0f;
          f.s1 = e4m3_to_float(static_cast<uint8_t>(two >> 8)) * 16384.0f;
        } else {
          const __nv_bfloat162 two = *reinterpret_cast<const __nv_bfloat162*>(ws_row + kk / 8);
          f.s0 = __low2float(two) * 16384.0f;
          f.s1 = __high2float(two) * 16384.0f;
        }
      } else {
        f.q = tc::zero4();
        f.s0 = f.s1 = 0.0f;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) f.a[i] = tc::load_a8(arow(i), k0 + acol, p.k, p.x_vec);
      if (fp4) {
        const int64_t kk = k0 + bcol;
        const bool any = wrow_ok && kk < p.k;
        f.q = any ? tc::load_q32(bw, wrow, kk, p.k, p.w_vec) : tc::zero4();
        f.s0 = any ? group_scale(bw, wrow, kk / 16) * 16384.0f : 0.0f;
        f.s1 = (any && kk + 16 < p.k) ? group_scale(bw, wrow, kk / 16 + 1) * 16384.0f : 0.0f;
      }
    }
  };
  auto stage = [&](tc::Smem& sm, int64_t k0, const tc::Prefetch& f) {
#pragma unroll
    for (int i = 0; i < 4; ++i) *reinterpret_cast<uint4*>(&sm.a[t / 8 + 32 * i][acol]) = f.a[i];
    if (kFast || fp4) {
      uint32_t words[16];
      tc::decode8(f.q.x, f.s0, words);
      tc::decode8(f.q.y, f.s0, words + 4);
      tc::decode8(f.q.z, f.s1, words + 8);
      tc::decode8(f.q.w, f.s1, words + 12);
      uint4* dst = reinterpret_cast<uint4*>(&sm.b[brow][bcol]);
#pragma unroll
      for (int i = 0; i < 4; ++i) dst[i] = make_uint4(words[4 * i], words[4 * i + 1], words[4 * i + 2], words[4 * i + 3]);
    } else {  // dense weights (rare at large M): element by element
      for (int i = 0; i < 32; ++i) {
        const int64_t kk = k0 + bcol + i;
        sm.b[brow][bcol + i] = __float2bfloat16_rn((wrow_ok && kk < p.k) ? load_w1(bw, wrow, kk) : 0.0f);
      }
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int jj = 0; jj < 4; ++jj) wmma::fill_fragment(acc[i][jj], 0.0f);
  // Tile rows of B fragment jj for this warp.
  auto b_row = [&](int jj) { return kGlu ? (jj < 2 ? wn * 32 + jj * 16 : kTcBN / 2 + wn * 32 + (jj - 2) * 16) : wn * 64 + jj * 16; };

  tc::Prefetch f;
  load(0, f);
  stage(bufs[0], 0, f);
  __syncthreads();
  int cur = 0;
  for (int64_t k0 = 0; k0 < p.k; k0 += kTcBK) {
    const bool more = k0 + kTcBK < p.k;
    if (more) load(k0 + kTcBK, f);  // in flight during the MMAs below
    const tc::Smem& sm = bufs[cur];
#pragma unroll
    for (int ks = 0; ks < kTcBK; ks += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &sm.a[wm * 32 + i * 16][ks], kTcLd);
#pragma unroll
      for (int jj = 0; jj < 4; ++jj) {  // one B fragment live at a time (registers)
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
        wmma::load_matrix_sync(b, &sm.b[b_row(jj)][ks], kTcLd);
#pragma unroll
        for (int i = 0; i < 2; ++i) wmma::mma_sync(acc[i][jj], a[i], b, acc[i][jj]);
      }
    }
    if (more) stage(bufs[cur ^ 1], k0 + kTcBK, f);  // last read in the previous step: free
    __syncthreads();
    cur ^= 1;
  }

  // Epilogue: each warp stages one 16x16 fragment at a time in its own corner
  // of the (now free) shared memory; a lane then stores 8 consecutive values.
  float* stage_f = reinterpret_cast<float*>(tc_dyn) + warp * 16 * 16;
  const int er = lane / 2, ec = (lane % 2) * 8;
  constexpr int kOutFrags = kGlu ? 2 : 4;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int jj = 0; jj < kOutFrags; ++jj) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> r = acc[i][jj];
      int64_t col;
      if (kGlu) {
        const float gdiv = job.w.global_divisor, udiv = job.w_up.global_divisor;
#pragma unroll
        for (int e = 0; e < r.num_elements; ++e)
          r.x[e] = activation(p.act, acc[i][jj].x[e] / gdiv) * (acc[i][jj + 2].x[e] / udiv);
        col = n0 + wn * 32 + jj * 16;
      } else {
        const float div = job.w.global_divisor;
#pragma unroll
        for (int e = 0; e < r.num_elements; ++e) r.x[e] = acc[i][jj].x[e] / div;
        col = n0 + wn * 64 + jj * 16;
      }
      wmma::store_matrix_sync(stage_f, r, 16, wmma::mem_row_major);
      __syncwarp();
      tc_store8(p, job, wm * 32 + i * 16 + er, col + ec, stage_f + er * 16 + ec);
      __syncwarp();
    }
  }
}

// Launches gemm_tc_kernel<kGlu, kFast> with its dynamic shared memory (the
// opt-in above 48 KiB is set once per instantiation).
template <bool kGlu, bool kFast>
int launch_gemm_tc(cudaStream_t st, dim3 grid, const TcParams& p) {
  constexpr size_t kSmem = 2 * sizeof(tc::Smem);
  static bool opted_in = false;
  if (!opted_in) {
    if (cudaError_t e = cudaFuncSetAttribute(gemm_tc_kernel<kGlu, kFast>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(kSmem)))
      return static_cast<int>(e);
    opted_in = true;
  }
  gemm_tc_kernel<kGlu, kFast><<<grid, kTcThreads, kSmem, st>>>(p);
  return last_error();
}

}  // namespace

}  // namespace seatrt::cuda
