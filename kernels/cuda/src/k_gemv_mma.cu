// The decode-shaped (skinny-M) weight kernel on the tensor cores: each
// weight word is read ONCE per token tile of up to 32 rows and applied to all
// of them with mma.sync m16n8k16 (BF16 in, fp32 accumulate).  NVFP4 weights
// (both scale layouts) and dense BF16 weights (the LM head).
//
// Work split.  A block owns one 16-row tile of the weight and all tokens of
// its group; its warps split K (a "k-step" is 128 columns: lane (g, t) of a
// warp holds one 16-byte chunk -- 32 codes -- of rows g and g+8 at columns
// kb + 32t..+31), so even a 2 MB matrix spreads over ~1000 warps.  Each lane
// keeps a ring of 4 steps of loads in flight: a slot is refilled with the
// step 4 ahead as soon as it is unpacked.  The warps' partial sums meet in
// shared memory at the end.  A fused gate/up (GLU) block gives half its
// warps to gate and half to up (same registers as a plain block) and forms
// act(gate) * up in the epilogue.
//
// Fragment mapping.  An MMA only needs A and B to agree on which k each
// register slot holds.  Unpacking a 32-bit word of 8 codes naturally gives
// the pairs (i, i+4) (see unpack_pair), so the B fragments (and dense A
// fragments) are built in the same pairing (prmt for BF16, a pack for F32).
// MMA s (0..7) of a step uses word s/2, pairs 2(s%2) and 2(s%2)+1.
//
// Exactness.  A pair of codes becomes two BF16 values fp4 * 2^-126 with
// bit operations only (sign to bit 15, the 3 magnitude bits to the bottom of
// the exponent and the top of the mantissa; code 1 is the subnormal
// 2^-127), then one BF16 multiply by (group scale * 2^100): the product
// fp4 * scale * 2^-26 has at most 6 significant bits and is a normal BF16, so
// it is exact.  The MMA forms exact products in fp32 and accumulates in fp32;
// the epilogue multiplies by 2^26 / global divisor.  F32 activations are
// split into BF16 terms fed as MMAs into the same accumulator: by default
// two (hi + lo, 16 significant bits, relative error <= 2^-16 per element,
// ~1e-5 on an output: HF runs these activations in BF16, 2^-8), or three
// (SEATRT_LINEAR_DECODE=p3: hi + mid + lo, 24 significant bits, the fp32
// value exactly barring underflow; a half more MMAs).  The per-step split
// (kXF32, "nosplit") always takes three.  MoE carries h from gate/up to down
// as two BF16 planes the same way.
#include "gemv.cuh"
#include "pdl.cuh"

#include "mma_fp4.cuh"

namespace seatrt::cuda {
namespace {

using namespace mma_fp4;

constexpr int kMaxWarps = 8;     // warps splitting K in a block

// B fragments of one token row for the lane's 32 columns, paired (i, i+4)
// within each 8: b[s][0..1] for MMA s.  BF16 rows.
__device__ __forceinline__ void load_b_bf16(const __nv_bfloat16* xr, bool ok, uint32_t (*b)[2]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint4 u = ok ? *reinterpret_cast<const uint4*>(xr + 8 * j) : make_uint4(0, 0, 0, 0);
    b[2 * j][0] = __byte_perm(u.x, u.z, 0x5410);      // (x0, x4)
    b[2 * j][1] = __byte_perm(u.x, u.z, 0x7632);      // (x1, x5)
    b[2 * j + 1][0] = __byte_perm(u.y, u.w, 0x5410);  // (x2, x6)
    b[2 * j + 1][1] = __byte_perm(u.y, u.w, 0x7632);  // (x3, x7)
  }
}

// How the activations arrive.
enum XMode : int { kXBf16 = 0, kXF32 = 1, kXBf16Pair = 2, kXBf16Tri = 3 };

// acc[nt] += A(L) . B(x rows of n-tile nt) for one step.  One n-tile of
// BF16 activations: the B fragments are loaded first and each A fragment is
// unpacked right before its MMA (few registers live).  Otherwise all 8 A
// fragments are unpacked once and shared by the n-tiles and F32 terms.
template <int kNt, int kX, bool kDense, bool kPerMma>
__device__ __forceinline__ void step_mma(const StepLoad<kDense>& L, const Mat& x, int64_t x_lo_offset,
                                         const int64_t* xrow, int ntv, int64_t k0, bool k_ok, float (*acc)[4]) {
  constexpr int kPlanes = kX == kXBf16Pair ? 2 : kX == kXBf16Tri ? 3 : 1;
  if (kPerMma && kNt == 1 && kX != kXF32) {
    const bool ok = k_ok && xrow[0] >= 0;
    const __nv_bfloat16* xr = static_cast<const __nv_bfloat16*>(x.data) + (ok ? xrow[0] * x.row_stride + k0 : 0);
    uint32_t b[kPlanes][8][2];
#pragma unroll
    for (int plane = 0; plane < kPlanes; ++plane) load_b_bf16(xr + plane * x_lo_offset, ok, b[plane]);
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      uint32_t a[4];
      unpack_one(L, s, a);
#pragma unroll
      for (int plane = 0; plane < kPlanes; ++plane) mma_bf16(acc[0], a, b[plane][s]);
    }
    return;
  }
  uint32_t a[8][4];
  unpack_step(L, a);
#pragma unroll
  for (int nt = 0; nt < kNt; ++nt) {
    if (nt >= ntv) break;
    const bool ok = k_ok && xrow[nt] >= 0;
    const int64_t off = ok ? xrow[nt] * x.row_stride + k0 : 0;
    if (kX != kXF32) {
      const __nv_bfloat16* xr = static_cast<const __nv_bfloat16*>(x.data) + off;
#pragma unroll
      for (int plane = 0; plane < kPlanes; ++plane) {
        uint32_t b[8][2];
        load_b_bf16(xr + plane * x_lo_offset, ok, b);
#pragma unroll
        for (int s = 0; s < 8; ++s) mma_bf16(acc[nt], a[s], b[s]);
      }
    } else {  // F32: three BF16 terms, each its own MMA into the same sum
      float f[32];
      const float* xr = static_cast<const float*>(x.data) + off;
#pragma unroll
      for (int v = 0; v < 8; ++v) {
        const float4 u = ok ? *reinterpret_cast<const float4*>(xr + 4 * v) : make_float4(0.f, 0.f, 0.f, 0.f);
        f[4 * v] = u.x; f[4 * v + 1] = u.y; f[4 * v + 2] = u.z; f[4 * v + 3] = u.w;
      }
#pragma unroll
      for (int term = 0; term < 3; ++term) {
#pragma unroll
        for (int s = 0; s < 8; ++s) {
          // MMA s: word j = s/2 (columns 8j..8j+7), pairs i = 2(s%2), +1.
          const int j = s / 2, i = 2 * (s % 2);
          uint32_t b[2];
          b[0] = pack_split(f[8 * j + i], f[8 * j + i + 4]);
          b[1] = pack_split(f[8 * j + i + 1], f[8 * j + i + 5]);
          mma_bf16(acc[nt], a[s], b);
        }
      }
    }
  }
}

// acc += A(L) . B for one step of an F32 token staged in shared memory as
// kPlanes BF16 planes (stage_b_fragments); `xc` is the shared address of
// the lane's token's 32-column chunk.  `ok` false: B is zero, never read.
template <int kPlanes>
__device__ __forceinline__ void step_mma_staged(const StepLoad<false>& L, unsigned xc, int plane_words, bool ok,
                                                float* acc) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint32_t a0[4], a1[4];
    unpack_one(L, 2 * j, a0);
    unpack_one(L, 2 * j + 1, a1);
#pragma unroll
    for (int p = 0; p < kPlanes; ++p) {
      const uint4 b = ok ? lds128(xc + 4u * unsigned(p * plane_words + 4 * j)) : make_uint4(0, 0, 0, 0);
      const uint32_t b0[2] = {b.x, b.y}, b1[2] = {b.z, b.w};
      mma_bf16(acc, a0, b0);
      mma_bf16(acc, a1, b1);
    }
  }
}

// out[r, c] = v; two BF16 planes (hi, lo = v - hi) when out_lo_offset is set.
__device__ __forceinline__ void store_out(const GemvArgs& a, const Mat& out, int64_t r, int64_t c, float v) {
  if (a.out_lo_offset) {
    __nv_bfloat16* o = static_cast<__nv_bfloat16*>(out.data) + r * out.row_stride + c;
    const __nv_bfloat16 hi = __float2bfloat16_rn(v);
    o[0] = hi;
    o[a.out_lo_offset] = __float2bfloat16_rn(v - __bfloat162float(hi));
  } else {
    mat_store(out, r, c, v);
  }
}

// linear_multi: the weight, its output and the first row of block `tile`.
// Unrolled with constant indices: a dynamic index into the kernel's
// parameter struct would copy it to local memory.
__device__ __forceinline__ void pick_multi(const GemvMulti& m, int64_t tile, WeightRef& w, int64_t& n, Mat& out,
                                           int64_t& n0) {
#pragma unroll
  for (int i = 0; i < kMultiMax; ++i) {
    if (i < m.count && tile >= m.first_tile[i]) {
      w = m.w[i];
      n = m.n[i];
      out = m.out[i];
      n0 = (tile - m.first_tile[i]) * 16;
    }
  }
}

// Weights that are not NVFP4 (possible for MoE experts, never for the
// model's): a plain per-output loop, correct and slow.
__device__ void generic_rows(const GemvArgs& a, const WeightRef& w, const WeightRef& wu, int64_t n0,
                             const int32_t* list, int64_t count) {
  for (int64_t e = threadIdx.x; e < 16 * count; e += blockDim.x) {
    const int64_t row = n0 + e % 16, m = e / 16;
    if (row >= a.n) continue;
    const int32_t asg = list ? list[m] : static_cast<int32_t>(m);
    const int64_t xr = asg / a.x_div;
    float s = 0.f, su = 0.f;
    for (int64_t kk = 0; kk < a.k; ++kk) {
      float xv = mat_load(a.x, xr, kk);
      if (a.x_lo_offset)
        xv += __bfloat162float(static_cast<const __nv_bfloat16*>(a.x.data)[a.x_lo_offset + xr * a.x.row_stride + kk]);
      s = fmaf(load_w1(w, row, kk), xv, s);
      if (a.glu) su = fmaf(load_w1(wu, row, kk), xv, su);
    }
    float v = s / w.global_divisor;
    if (a.glu) v = activation(a.act, v) * (su / wu.global_divisor);
    if (a.row_weight) v *= a.row_weight[asg];
    store_out(a, a.out, asg, row, v);
  }
}

// Programmatic dependent launch: weight loads issued before this do not
// depend on the previous kernel; activations read after it do.  Once per block.
__device__ __forceinline__ void pdl_wait(bool& waited) {
  if (waited) return;
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  waited = true;
}

// The block's output tile: 16 rows x up to 8*kNt tokens.  A GLU block's warps
// are two halves, gate then up, each splitting K on its own.
// kRaw (the default for plain NVFP4 Linears; SEATRT_LINEAR_DECODE=plain
// turns it off): the group scales are loaded raw and converted when consumed
// (load_step_raw).  kStage > 0 (plain NVFP4 Linears, F32 x, one n-tile):
// the block stages its tokens' x once in shared memory, split into kStage
// BF16 planes (GemvArgs::f32_planes), after the partial-sum buffer; the
// first group of weight loads is issued before the PDL wait and the staging.
// Blocks per SM a configuration is compiled for (its register budget: two
// blocks of 8 warps, 128 registers).  Two where that fits without spilling
// the default paths; NVFP4 weights with F32 x split once into two planes
// take two at every n-tile count (at 16-32 rows they had 168-180 registers,
// one 8-warp block per SM); dense weights (the LM head) and the per-step F32
// split spill hundreds of bytes at 128 and keep one.
template <int kNt, bool kGlu, int kX, bool kDense, int kStage>
constexpr int gemv_blocks_per_sm() {
  const bool glu_planes = kGlu && (kX == kXBf16Pair || kX == kXBf16Tri);  // spills at 128 (linear_glu)
  const bool two = (kNt <= 2 && kX == kXBf16 && !kGlu && !kDense) ||
                   (kNt == 1 && kX != kXF32 && !kDense && !glu_planes) ||
                   (kX == kXBf16Pair && !kGlu && !kDense) || kStage > 0;
  return two ? 2 : 1;
}

// kMulti: linear_multi's weights over blockIdx.x (pick_multi); its own
// instantiations, since the picked weight lives in registers where a single
// weight's fields are constant-bank operands (+56 bytes of spills at 32 rows).
template <int kNt, bool kGlu, int kX, bool kDense, bool kRaw = false, int kStage = 0, bool kMulti = false>
__global__ void __launch_bounds__(kMaxWarps * 32, (gemv_blocks_per_sm<kNt, kGlu, kX, kDense, kStage>()))
    gemv_mma_kernel(GemvArgs a) {
  // Steps of loads in flight per lane.  More costs registers (the compiler
  // also hoists the x loads of every step in flight); 3 keeps one-n-tile
  // BF16 blocks at <= 128 registers, two blocks per SM.
  // Plain NVFP4 Linears (v1's configuration, measured best for them): 4
  // steps issued at once, no ring -- each warp has <= 4 steps except at
  // K = 8192, and the ring's registers cost a block per SM.  GLU halves
  // (~6 steps per warp), the MoE down (two planes) and dense weights keep the
  // ring.
  constexpr bool kRing = kGlu || kX == kXBf16Pair || kDense;
  constexpr int kUnroll = kStage > 0 && kRaw ? 3 : !kRing ? 4 : (kNt == 1 && kX != kXF32 && !kDense) ? 3 : 2;
  extern __shared__ __align__(16) float red[];  // [warps][kNt][32][4]
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int warps = blockDim.x >> 5;
  const int per_mat = kGlu ? warps / 2 : warps;  // warps splitting one matrix's K
  const bool up_half = kGlu && warp >= per_mat;
  int64_t n0 = int64_t(blockIdx.x) * 16, multi_n = 0;
  Mat multi_out{};
  // The output's rows and view: a single weight's are read from the
  // parameters at each use (kept out of registers).
#define SEATRT_GEMV_N (kMulti ? multi_n : a.n)
#define SEATRT_GEMV_OUT (kMulti ? multi_out : a.out)
  const int64_t steps = (a.k + kKStep - 1) / kKStep;
  const int64_t per = (steps + per_mat - 1) / per_mat;
  const int64_t s_begin = (warp % per_mat) * per;
  const int64_t s_end = s_begin + per < steps ? s_begin + per : steps;

  int64_t count = a.groups.rows;
  const int32_t* list = nullptr;
  WeightRef w = a.w, wu = a.w_up;
  if constexpr (kMulti) pick_multi(a.multi, blockIdx.x, w, multi_n, multi_out, n0);
  bool waited = false;
  if (a.groups.active) {
    // MoE: the expert of this slot comes from the grouping kernel.
    pdl_wait(waited);
    if (int(blockIdx.y) >= *a.groups.num_active) return;
    const int e = a.groups.active[blockIdx.y];
    const int64_t first = a.groups.offsets[e];
    count = a.groups.offsets[e + 1] - first;
    list = a.groups.sorted + first;
    w = a.table[e];
    if (a.glu) wu = a.table_up[e];
    const int32_t want = kDense ? int32_t(WeightKind::DenseBf16) : -1;
    auto fits = [&](const WeightRef& r) {
      return kDense ? r.kind == want : r.kind <= int32_t(WeightKind::Fp4Bf16Scales);
    };
    if (!fits(w) || (a.glu && !fits(wu))) {
      generic_rows(a, w, wu, n0, list, count);
      return;
    }
  }
  const WeightRef mw = up_half ? wu : w;  // the matrix this warp reads

  for (int64_t t0 = 0; t0 < count; t0 += 8 * kNt) {
    const int64_t left = count - t0;
    const int ntv = static_cast<int>(left >= 8 * kNt ? kNt : (left + 7) / 8);
    float acc[kNt][4];
#pragma unroll
    for (int nt = 0; nt < kNt; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nt][i] = 0.f;
    // Activation rows of the lane's token (column g of each n-tile).
    int64_t xrow[kNt];
#pragma unroll
    for (int nt = 0; nt < kNt; ++nt) {
      const int64_t m = t0 + 8 * nt + g;
      xrow[nt] = m < count ? (list ? list[m] : m) / a.x_div : -1;
    }
    if constexpr (kStage > 0) {
      static_assert(kNt == 1 && kX == kXF32 && !kDense, "staging is for NVFP4 Linears of F32 x");
      const int valid = static_cast<int>(count - t0 < 8 ? count - t0 : 8);
      const int tok_stride = staged_token_words(kStage, a.k), plane_words = static_cast<int>(a.k / 32) * 16;
      uint32_t* xs = reinterpret_cast<uint32_t*>(red + warps * kNt * 128);
      StepLoad<false> L[kUnroll];
      auto load_group = [&](int64_t s0) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t k0 = (s0 + u) * kKStep + 32 * t;
          if constexpr (kRaw) load_step_raw(mw, n0, SEATRT_GEMV_N, k0, s0 + u < s_end && k0 < a.k, g, L[u]);
          else load_step(mw, n0, SEATRT_GEMV_N, k0, s0 + u < s_end && k0 < a.k, g, L[u]);
        }
      };
      load_group(s_begin);  // weights: independent of the previous kernel
      pdl_wait(waited);
      __syncthreads();  // a previous token tile's readers of xs are done
      stage_b_fragments<kStage, true>(a.x, 0, a.k, static_cast<int>(a.k / 32), valid, tok_stride,
                           [&](int m) { return (list ? list[t0 + m] : t0 + m) / a.x_div; }, xs);
      __syncthreads();
      const unsigned xt = static_cast<unsigned>(__cvta_generic_to_shared(xs)) + 4u * unsigned(g * tok_stride);
      for (int64_t s0 = s_begin; s0 < s_end; s0 += kUnroll) {
        if (s0 != s_begin) load_group(s0);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t s = s0 + u;
          if (s >= s_end) break;
          const int64_t k0 = s * kKStep + 32 * t;
          if constexpr (kRaw) finish_scales(L[u], mw.kind);
          step_mma_staged<kStage>(L[u], xt + 64u * unsigned(k0 / 32), plane_words, g < valid && k0 < a.k, acc[0]);
        }
      }
    } else if (kRing) {
      // Ring of kUnroll steps in flight: step s's slot is refilled with step
      // s + kUnroll as soon as s is consumed, so loads overlap the MMAs.
      StepLoad<kDense> L[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t k0 = (s_begin + u) * kKStep + 32 * t;
        if constexpr (kRaw && !kDense) load_step_raw(mw, n0, SEATRT_GEMV_N, k0, s_begin + u < s_end && k0 < a.k, g, L[u]);
        else load_step(mw, n0, SEATRT_GEMV_N, k0, s_begin + u < s_end && k0 < a.k, g, L[u]);
      }
      pdl_wait(waited);
      for (int64_t s0 = s_begin; s0 < s_end; s0 += kUnroll) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t s = s0 + u;
          if (s >= s_end) break;
          const int64_t k0 = s * kKStep + 32 * t;
          if constexpr (kRaw && !kDense) finish_scales(L[u], mw.kind);
          step_mma<kNt, kX, kDense, true>(L[u], a.x, a.x_lo_offset, xrow, ntv, k0, k0 < a.k, acc);
          const int64_t kn = k0 + int64_t(kUnroll) * kKStep;
          if (s + kUnroll < s_end) {
            if constexpr (kRaw && !kDense) load_step_raw(mw, n0, SEATRT_GEMV_N, kn, kn < a.k, g, L[u]);
            else load_step(mw, n0, SEATRT_GEMV_N, kn, kn < a.k, g, L[u]);
          }
        }
      }
    } else {
      // Groups of kUnroll steps, each group's loads all issued before any is
      // used (v1's order).
      for (int64_t s0 = s_begin; s0 < s_end; s0 += kUnroll) {
        StepLoad<kDense> L[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t k0 = (s0 + u) * kKStep + 32 * t;
          if constexpr (kRaw && !kDense) load_step_raw(mw, n0, SEATRT_GEMV_N, k0, s0 + u < s_end && k0 < a.k, g, L[u]);
          else load_step(mw, n0, SEATRT_GEMV_N, k0, s0 + u < s_end && k0 < a.k, g, L[u]);
        }
        pdl_wait(waited);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t s = s0 + u;
          if (s >= s_end) break;
          const int64_t k0 = s * kKStep + 32 * t;
          if constexpr (kRaw && !kDense) finish_scales(L[u], mw.kind);
          step_mma<kNt, kX, kDense, false>(L[u], a.x, a.x_lo_offset, xrow, ntv, k0, k0 < a.k, acc);
        }
      }
    }
    pdl_wait(waited);  // a warp without steps
    // Split-K partial sums meet in shared memory.
    __syncthreads();  // the previous token tile's readers are done
#pragma unroll
    for (int nt = 0; nt < kNt; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) red[((warp * kNt + nt) * 32 + lane) * 4 + i] = acc[nt][i];
    __syncthreads();
    const float down = kDense ? 1.0f : kScaleDown;
    for (int e = threadIdx.x; e < kNt * 128; e += blockDim.x) {
      const int nt = e / 128, ln = (e / 4) % 32, i = e % 4;
      const int64_t row = n0 + (ln >> 2) + 8 * (i >> 1);
      const int64_t m = t0 + 8 * nt + 2 * (ln & 3) + (i & 1);
      if (row >= SEATRT_GEMV_N || m >= count) continue;
      float sum = 0.f, sum_up = 0.f;
      for (int wi = 0; wi < per_mat; ++wi) sum += red[((wi * kNt + nt) * 32 + ln) * 4 + i];
      if (kGlu)
        for (int wi = per_mat; wi < 2 * per_mat; ++wi) sum_up += red[((wi * kNt + nt) * 32 + ln) * 4 + i];
      float v = sum * down / w.global_divisor;
      if (kGlu) v = activation(a.act, v) * (sum_up * down / wu.global_divisor);
      const int32_t asg = list ? list[m] : static_cast<int32_t>(m);
      if (a.row_weight) v *= a.row_weight[asg];
      store_out(a, SEATRT_GEMV_OUT, asg, row, v);
    }
  }
  pdl_wait(waited);  // no tokens: still release the dependents and order with them
#undef SEATRT_GEMV_N
#undef SEATRT_GEMV_OUT
}

template <int kNt, bool kGlu, int kX, bool kDense, bool kRaw = false, int kStage = 0, bool kMulti = false>
int launch_nt(cudaStream_t st, const GemvArgs& a, unsigned slots, int64_t max_rows = 0) {
  const int64_t steps = ceil_div(a.k, kKStep);
  // About two steps per warp: enough loads in flight, few idle warps.  A
  // GLU block has two halves of warps (gate, up).
  const int halves = kGlu ? 2 : 1;
  int warps = static_cast<int>(ceil_div(steps, 2));
  warps = warps < 1 ? 1 : warps > kMaxWarps / halves ? kMaxWarps / halves : warps;
  warps *= halves;
  size_t smem = sizeof(float) * size_t(warps) * kNt * 128;
  auto kernel = gemv_mma_kernel<kNt, kGlu, kX, kDense, kRaw, kStage, kMulti>;
  if constexpr (kStage > 0) {
    // Always set: the staged rows can pass the 48 KB a launch gets without
    // the opt-in (K = 8192: 49 KB per token).
    smem += sizeof(uint32_t) * size_t(staged_token_words(kStage, a.k)) * size_t(max_rows < 8 ? max_rows : 8);
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)))
      return static_cast<int>(e);
  }
  const int64_t tiles = a.multi.count ? a.multi.first_tile[a.multi.count] : ceil_div(a.n, 16);
  return static_cast<int>(launch_pdl(kernel, dim3(static_cast<unsigned>(tiles), slots),
                                     dim3(static_cast<unsigned>(warps * 32)), smem, st, a));
}

// Staged F32 x (kStage) while its shared memory stays small enough for two
// blocks per SM: one token at every model K, up to 5 at K = 2816.  The
// budget counts three planes whatever f32_planes is: two planes would let 8
// rows stage at K = 2816, and the batch-8 step was 0.18 ms slower that way
// than with x split once (2026-12-01 03:40 run).
constexpr size_t kStageBudget = 100 * 1024;
bool stage_fits(const GemvArgs& a, int64_t max_rows) {
  const bool kinds = a.w.kind <= int32_t(WeightKind::Fp4Bf16Scales) &&
                     (!a.glu || (a.raw_scales && a.w_up.kind <= int32_t(WeightKind::Fp4Bf16Scales)));
  return kinds && a.x.dtype == SEATRT_DTYPE_F32 && !a.table &&
         a.x_lo_offset == 0 && a.out_lo_offset == 0 &&
         !a.groups.active && max_rows >= 1 && max_rows <= 8 &&
         sizeof(uint32_t) * size_t(staged_token_words(3, a.k)) * size_t(max_rows) <= kStageBudget;
}

template <bool kGlu, int kX, bool kDense, bool kRaw = false, bool kMulti = false>
int launch_rows(cudaStream_t st, const GemvArgs& a, unsigned slots, int64_t max_rows) {
  if (max_rows <= 8 || a.max_ntiles == 1) return launch_nt<1, kGlu, kX, kDense, kRaw, 0, kMulti>(st, a, slots);
  if (max_rows <= 16 || a.max_ntiles == 2) return launch_nt<2, kGlu, kX, kDense, kRaw, 0, kMulti>(st, a, slots);
  return launch_nt<4, kGlu, kX, kDense, kRaw, 0, kMulti>(st, a, slots);
}

}  // namespace

bool gemv_mma_stages_x(const GemvArgs& a, int64_t max_rows) { return a.stage_x && stage_fits(a, max_rows); }

bool gemv_mma_fits(const GemvArgs& a) {
  const bool x_ok = a.x.dtype == SEATRT_DTYPE_BF16 || (a.x.dtype == SEATRT_DTYPE_F32 && a.x_lo_offset == 0);
  const bool out_ok = a.out_lo_offset == 0 || a.out.dtype == SEATRT_DTYPE_BF16;
  return x_ok && out_ok && a.vec && a.k % 32 == 0;
}

bool gemv_mma_multi_fits(const GemvArgs& a, int64_t max_rows) {
  if (!a.raw_scales || a.glu || a.table || a.out_lo_offset != 0) return false;
  if (a.x_planes == 2 || a.x_planes == 3) return a.x_lo_offset != 0;  // split once
  return a.x_lo_offset == 0 && (a.x.dtype == SEATRT_DTYPE_BF16 || (a.stage_x && stage_fits(a, max_rows)));
}

int launch_gemv_mma(cudaStream_t st, const GemvArgs& a, unsigned slots, int64_t max_rows) {
  if (a.multi.count) {  // linear_multi: NVFP4, raw scales; staged, split into planes, or BF16 x
    if (!gemv_mma_multi_fits(a, max_rows)) return static_cast<int>(cudaErrorInvalidValue);
    if (a.x_planes == 2) return launch_rows<false, kXBf16Pair, false, true, true>(st, a, slots, max_rows);
    if (a.x_planes == 3) return launch_rows<false, kXBf16Tri, false, true, true>(st, a, slots, max_rows);
    if (a.x.dtype == SEATRT_DTYPE_BF16) return launch_rows<false, kXBf16, false, true, true>(st, a, slots, max_rows);
    if (a.f32_planes == 2) return launch_nt<1, false, kXF32, false, true, 2, true>(st, a, slots, max_rows);
    return launch_nt<1, false, kXF32, false, true, 3, true>(st, a, slots, max_rows);
  }
  const bool dense = !a.table && a.w.kind == int32_t(WeightKind::DenseBf16);
  // linear_glu of F32 x (raw scales): staged, or split once into planes.
  if (a.glu && !a.table && a.raw_scales && a.stage_x && stage_fits(a, max_rows)) {
    if (a.f32_planes == 2) return launch_nt<1, true, kXF32, false, true, 2>(st, a, slots, max_rows);
    return launch_nt<1, true, kXF32, false, true, 3>(st, a, slots, max_rows);
  }
  if (a.glu && !a.table && a.raw_scales && a.x_planes) {
    if (a.x_planes == 2) return launch_rows<true, kXBf16Pair, false, true>(st, a, slots, max_rows);
    return launch_rows<true, kXBf16Tri, false, true>(st, a, slots, max_rows);
  }
  if (a.x_planes == 3) {  // plain linear only: F32 x split once (k_linear.cu)
    if (dense) return launch_rows<false, kXBf16Tri, true>(st, a, slots, max_rows);
    if (a.raw_scales) return launch_rows<false, kXBf16Tri, false, true>(st, a, slots, max_rows);
    return launch_rows<false, kXBf16Tri, false>(st, a, slots, max_rows);
  }
  if (a.x_planes == 2) {
    if (dense) return launch_rows<false, kXBf16Pair, true>(st, a, slots, max_rows);
    if (a.raw_scales) return launch_rows<false, kXBf16Pair, false, true>(st, a, slots, max_rows);
    return launch_rows<false, kXBf16Pair, false>(st, a, slots, max_rows);
  }
  if (dense) {  // plain linear only (the LM head)
    if (a.x.dtype == SEATRT_DTYPE_F32) return launch_rows<false, kXF32, true>(st, a, slots, max_rows);
    return launch_rows<false, kXBf16, true>(st, a, slots, max_rows);
  }
  if (a.glu) {
    if (a.x.dtype == SEATRT_DTYPE_F32) return launch_rows<true, kXF32, false>(st, a, slots, max_rows);
    return launch_rows<true, kXBf16, false>(st, a, slots, max_rows);
  }
  if (a.x_lo_offset) return launch_rows<false, kXBf16Pair, false>(st, a, slots, max_rows);
  if (a.stage_x && stage_fits(a, max_rows)) {
    if (a.f32_planes == 2) {
      if (a.raw_scales) return launch_nt<1, false, kXF32, false, true, 2>(st, a, slots, max_rows);
      return launch_nt<1, false, kXF32, false, false, 2>(st, a, slots, max_rows);
    }
    if (a.raw_scales) return launch_nt<1, false, kXF32, false, true, 3>(st, a, slots, max_rows);
    return launch_nt<1, false, kXF32, false, false, 3>(st, a, slots, max_rows);
  }
  if (a.raw_scales) {
    if (a.x.dtype == SEATRT_DTYPE_F32) return launch_rows<false, kXF32, false, true>(st, a, slots, max_rows);
    return launch_rows<false, kXBf16, false, true>(st, a, slots, max_rows);
  }
  if (a.x.dtype == SEATRT_DTYPE_F32) return launch_rows<false, kXF32, false>(st, a, slots, max_rows);
  return launch_rows<false, kXBf16, false>(st, a, slots, max_rows);
}

}  // namespace seatrt::cuda
