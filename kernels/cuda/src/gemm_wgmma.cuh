// A third prefill GEMM core on Hopper's asynchronous warpgroup MMA
// (wgmma.mma_async m64n256k16, BF16 in, fp32 accumulate).  It serves the
// same three modes as gemm_tc.cuh through the same TcParams: the grouped
// MoE's gate/up (GLU) and down GEMMs (the default since run 5,
// NOTES-prefill.md) and the plain linear (the default from run 4 until run 6
// moved it to gemm_wgmma_wide.cuh's 256 x 128 tile; kept under
// SEATRT_PREFILL_WGMMA=sync), for the common case only:
// every weight FP4 with 16-byte rows, x with 16-byte rows, K % 64 == 0.
//
// Why: the mma.sync core of gemm_mma.cuh is latency-bound at 8 warps per SM
// (every warp waits for its own ldmatrix, decode and barrier).  wgmma reads
// both operands from shared memory itself and runs in the background, so the
// same warps decode the next K step's weights while the tensor cores work.
//
// Block: 128 x-rows x 256 weight rows, two warpgroups (256 threads), each
// owning 64 rows x 256 columns (128 fp32 accumulators per thread); K steps
// of 64.  Shared memory, all tiles K-major with rows of 128 bytes in the
// 128-byte swizzle the descriptors name (16-byte chunk c of row r stored at
// chunk c ^ (r % 8); tiles 1024-byte aligned):
//   S stages of the activation tile (128 x 64 BF16, by cp.async),
//   2 decoded weight tiles (256 x 64 BF16),
//   S stages of the raw FP4 bytes (256 x 32 bytes, by cp.async; not swizzled).
// Iteration s: wait for this thread's copies of step s+1, fence its shared
// writes (copies, decode stores) to the async proxy the tensor cores read
// through, barrier; issue the four wgmma of step s; while they run, decode
// step s+1 and issue the copies of step s+S-1; wait for the wgmma (the next
// iteration overwrites what they read).
// The decode is decode8_pairs (exact, fp4 * scale * 2^-26); the epilogue
// multiplies by 2^26 and applies the global divisor in fp32.
//
// MoE modes (the block's 128 x-rows are one TcTile of the grouping kernel:
// one expert, <= 128 rows of the expert-sorted assignment list):
//  - gate/up: x row = sorted assignment / top_k (gathered through the row
//    pointers, as gemm_tc); the 256 weight rows are 128 gate rows and the
//    same 128 up rows, so accumulator columns j and j + 128 of a thread are
//    gate and up of the same output: act(gate) * up in registers, BF16 h
//    rows in sorted order;
//  - down: x = h rows in sorted order; output row = the assignment id, times
//    its router weight, fp32.
// No atomics: every output is written by one thread, so runs are
// bit-identical.
#pragma once

#include "gemm_mma.cuh"
#include "mma_fp4.cuh"
#include "wgmma_operands.cuh"

namespace seatrt::cuda {
namespace {
namespace wg {

constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4, kThreads = 256;
constexpr int kATile = kBM * 128;   // bytes of one activation stage
constexpr int kRTile = kBN * 32;    // bytes of one raw FP4 stage
constexpr int kBTile = kBN * 128;   // bytes of one decoded weight tile
constexpr int kSmem = kStages * (kATile + kRTile) + 2 * kBTile + 1024;  // + alignment slack
constexpr int kUnits = 2 * kBN / kThreads;  // 32-weight decode units per thread
constexpr int kACopies = kBM * 8 / kThreads;  // 16-byte activation copies per thread and step

// Byte offset of 16-byte chunk c of row r in a 128-byte-swizzled tile.
__device__ __forceinline__ uint32_t swz(int r, int c) { return uint32_t(r * 128 + ((c ^ (r & 7)) << 4)); }

// Shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row groups
// 1024 bytes apart (SBO), start address >> 4 in bits 0-13; LBO (bits
// 16-29) is not used by swizzled K-major layouts; layout type 1 (128B
// swizzle) in bits 62-63.
__device__ __forceinline__ uint64_t desc(uint32_t smem_addr) {
  return uint64_t((smem_addr & 0x3FFFFu) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// The 8 FP4 codes of word q (code j in bits 4j..4j+3) as 4 BF16 pairs in
// element order (pair i: codes 2i, 2i+1), times sc (the group scale * 2^100
// in both halves): fp4 * scale * 2^-26 each, exact (k_gemv_mma.cu has the
// argument: a code placed in the BF16 exponent/mantissa bits is fp4 *
// 2^-126, code 1 a subnormal the BF16 multiply honours).  Byte i holds the
// pair; b | b << 12 holds code 2i at bits 0-3 and code 2i+1 at 16-19, so a
// shift by 12 brings both signs (bits 3, 19) to bits 15, 31 and one by 6
// both magnitudes (bits 0-2, 16-18) to bits 6-8, 22-24; each shifted copy is
// one multiply of b: about 6 instructions per pair, against ~11 for the
// fp32 route of tc::decode8.
__device__ __forceinline__ void decode8_pairs(uint32_t q, uint32_t sc, uint32_t* out) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t b = __byte_perm(q, 0u, 0x4440u + i);
    out[i] = mma_fp4::bf16x2_mul(((b * 0x1001000u) & 0x80008000u) | ((b * 0x40040u) & 0x01C001C0u), sc);
  }
}

// A unit's two raw group scales (mma::scale_pair's input) as BF16 pairs of
// scale * 2^100, decode8_pairs's multiplier (exact: a power-of-two factor).
__device__ __forceinline__ void scale_pairs_up(uint32_t raw, bool e4m3, uint32_t& sc0, uint32_t& sc1) {
  float s0, s1;
  mma::scale_pair(raw, e4m3, s0, s1);  // scale * 2^14
  const __nv_bfloat162 b0 = __float2bfloat162_rn(s0 * (mma_fp4::kScaleUp / 16384.0f));
  const __nv_bfloat162 b1 = __float2bfloat162_rn(s1 * (mma_fp4::kScaleUp / 16384.0f));
  sc0 = *reinterpret_cast<const uint32_t*>(&b0);
  sc1 = *reinterpret_cast<const uint32_t*>(&b1);
}

// Ties a register to the asm stream, so the compiler neither reads an
// accumulator before wgmma_wait0 nor moves other uses across it.
__device__ __forceinline__ void fence_reg(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// d (the 128 fp32 accumulators of a warpgroup's 64 x 256 tile) += A (64 x 16,
// descriptor a) * B^T (B: 256 x 16, descriptor b), both K-major BF16 in
// shared memory; scale-d is 1 (the accumulators start at zero).
__device__ __forceinline__ void wgmma_m64n256k16(float* d, uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      WGMMA_R128
      "}, "
      "%128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : WGMMA_D128
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

}  // namespace wg

// The block's job (both kernels): plain linear, rows blockIdx.y * kBM..;
// MoE, the row tile blockIdx.y of the grouping kernel.  False: no work (past
// the rows, or past *num_tiles: the grid is sized for the most tiles possible).
// kBM: the block's rows (a MoE tile has at most as many: the grouping
// kernel was asked for tiles of that size).
template <int kMode, int kBM = wg::kBM>
__device__ __forceinline__ bool wg_job(const TcParams& p, TcJob& job) {
  if constexpr (kMode == int(TcMode::Linear)) {
    job.w = p.w;
    job.m0 = int64_t(blockIdx.y) * kBM;
    const int64_t left = p.x.rows - job.m0;
    if (left <= 0) return false;
    job.rows = static_cast<int32_t>(left < kBM ? left : kBM);
  } else {
    if (int(blockIdx.y) >= *p.num_tiles) return false;
    const TcTile tile = p.tiles[blockIdx.y];
    job.w = p.table[tile.expert];
    if (kMode == int(TcMode::MoeGateUp)) job.w_up = p.table_up[tile.expert];
    job.m0 = tile.first;
    job.rows = tile.rows;
  }
  return true;
}

// A thread's weight decode units (as gemm_mma.cuh): unit u = t + v *
// kStride (v < kN) is weight tile row u / 2, columns (u % 2) * 32 .. +31 of
// each K step (GLU: tile rows 0-127 are gate rows n0.., 128-255 the up rows
// n0..), with its raw-byte and scale pointers.
template <int kN, int kStride>
struct WgUnits {
  const unsigned char* q[kN];
  const char* s[kN];
  bool ok[kN], e4m3[kN];

  template <bool kGlu>
  __device__ __forceinline__ void init(const TcParams& p, const TcJob& job, int64_t n0, int t) {
#pragma unroll
    for (int v = 0; v < kN; ++v) {
      const int u = t + v * kStride, br = u >> 1;
      const WeightRef& w = (kGlu && br >= wg::kBN / 2) ? job.w_up : job.w;
      const int64_t row = n0 + (kGlu ? br % (wg::kBN / 2) : br);
      ok[v] = row < p.n;
      e4m3[v] = w.kind == int32_t(WeightKind::Fp4E4m3Scales);
      const int64_t rr = ok[v] ? row : 0;
      q[v] = static_cast<const unsigned char*>(w.data) + rr * w.data_row_bytes + (u & 1) * 16;
      s[v] = static_cast<const char*>(w.scales) + rr * w.scale_row_elems * (e4m3[v] ? 1 : 2);
    }
  }
  // Each unit's two group scales of K step `step`, raw (e4m3 or BF16 pair).
  __device__ __forceinline__ void load_scales(int step, int t, uint32_t* sc) const {
#pragma unroll
    for (int v = 0; v < kN; ++v) {
      const int64_t g = int64_t(step) * 4 + ((t + v * kStride) & 1) * 2;
      if (!ok[v])
        sc[v] = 0u;
      else if (e4m3[v])
        sc[v] = __ldg(reinterpret_cast<const unsigned short*>(s[v] + g));
      else
        sc[v] = __ldg(reinterpret_cast<const unsigned int*>(s[v] + 2 * g));
    }
  }
};

// The epilogue of the wgmma kernels: a warpgroup's 64 x kCols accumulators
// (kCols / 2 per thread; wgi: the warpgroup's 64-row part of the block) to
// the output.  `up` undoes the decode's power-of-two factor (2^26:
// decode8_pairs gives fp4 * scale * 2^-26), so the value stored is the one
// the unscaled products would give.
template <int kMode, int kCols = wg::kBN>
__device__ __forceinline__ void wg_store(const TcParams& p, const TcJob& job, int64_t n0, const float (&acc)[kCols / 2],
                                         int wgi, int warp, int lane, float up) {
  constexpr int kJ = kCols / 8;  // 8-column groups
  constexpr bool kGlu = kMode == int(TcMode::MoeGateUp), kDown = kMode == int(TcMode::MoeDown);
  // Accumulator i of a thread is row 16 * warp + g (+8 for i % 4
  // >= 2) of its warpgroup's 64, column 8 * (i / 4) + 2 * tq + i % 2.
  const int g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int r = wgi * 64 + warp * 16 + g + hh * 8;
    if (r >= job.rows) continue;
    int64_t row = job.m0 + r;
    if constexpr (kGlu) {
      // Columns j*8.. (j < kJ / 2) are gate, (j + kJ / 2)*8.. the up rows of the same outputs.
      const float gdiv = job.w.global_divisor, udiv = job.w_up.global_divisor;
#pragma unroll
      for (int j = 0; j < kJ / 2; ++j) {
        const float* ga = &acc[4 * j + 2 * hh];
        const float* ua = &acc[4 * (j + kJ / 2) + 2 * hh];
        const float v0 = activation(p.act, ga[0] * up / gdiv) * (ua[0] * up / udiv);
        const float v1 = activation(p.act, ga[1] * up / gdiv) * (ua[1] * up / udiv);
        mma::store2(p.out, p.n, row, n0 + j * 8 + 2 * tq, v0, v1);
      }
    } else {
      float scale = 1.0f;
      if constexpr (kDown) {
        row = p.sorted[row];
        scale = p.row_weight[row];
      }
      const float div = job.w.global_divisor;  // acc * up / div: up a power of two (exact)
#pragma unroll
      for (int j = 0; j < kJ; ++j)
        mma::store2(p.out, p.n, row, n0 + j * 8 + 2 * tq, acc[4 * j + 2 * hh] * up / div * scale,
                    acc[4 * j + 2 * hh + 1] * up / div * scale);
    }
  }
}

// kMode: TcMode::Linear, MoeGateUp or MoeDown (compile-time: the GLU
// epilogue and the gate/up weight rows differ).
template <int kMode>
__global__ void __launch_bounds__(wg::kThreads, 1) gemm_wgmma_kernel(TcParams p) {
  constexpr bool kGlu = kMode == int(TcMode::MoeGateUp);
  using namespace wg;
  extern __shared__ __align__(1024) unsigned char wg_dyn[];
  __shared__ const __nv_bfloat16* arows[kBM];
  // 1024-byte aligned base (the swizzle pattern is a function of the address).
  const uint32_t raw_base = mma::smem_addr(wg_dyn);
  const uint32_t base = (raw_base + 1023u) & ~1023u;
  unsigned char* const gbase = wg_dyn + (base - raw_base);
  const uint32_t sa = base;                                     // kStages activation stages
  const uint32_t sb = base + kStages * kATile;                  // 2 decoded weight tiles
  unsigned char* const sr = gbase + kStages * kATile + 2 * kBTile;  // kStages raw stages

  TcJob job;
  if (!wg_job<kMode>(p, job)) return;
  const int t = threadIdx.x, wgi = t >> 7, warp = (t >> 5) & 3, lane = t & 31;
  // First output column of the block (GLU: 128 outputs, each a gate and an up row).
  const int64_t n0 = int64_t(blockIdx.x) * (kGlu ? kBN / 2 : kBN);
  for (int r = t; r < kBM; r += kThreads) arows[r] = tc_a_row(p, job, r);
  // A warpgroup whose 64 rows are all past the tile's skips its wgmma, as in
  // gemm_wgmma_wide.cuh: at prompts of a few hundred tokens the experts
  // average a few rows each, so a MoE tile's second half is empty and its
  // MMA work was half the GEMM's (the decode is shared and stays).  The test
  // is made warp-uniform through a shuffle (ptxas serializes wgmma under a
  // branch it cannot prove uniform); the plain linear has no test.
  const bool wg_rows =
      kMode == int(TcMode::Linear) || __shfl_sync(0xffffffffu, int(wgi * 64 < job.rows), 0) != 0;

  WgUnits<kUnits, kThreads> units;
  units.init<kGlu>(p, job, n0, t);
  const auto& uq = units.q;
  const auto& uok = units.ok;
  __syncthreads();  // arows

  const int nk = static_cast<int>(p.k / kBK);
  const int a_ch = t & 7;
  auto issue = [&](int step) {
    const int slot = step % kStages;
    const int64_t k0 = int64_t(step) * kBK;
#pragma unroll
    for (int i = 0; i < kACopies; ++i) {
      const int r = (t >> 3) + i * (kThreads / 8);
      const __nv_bfloat16* src = arows[r];
      mma::cp_async16(sa + slot * kATile + swz(r, a_ch), src ? src + k0 + a_ch * 8 : p.x.data, src != nullptr);
    }
#pragma unroll
    for (int v = 0; v < kUnits; ++v)
      mma::cp_async16(mma::smem_addr(sr + slot * kRTile + (t + v * kThreads) * 16), uq[v] + k0 / 2, uok[v]);
  };
  auto load_scales = [&](int step, uint32_t* sc) { units.load_scales(step, t, sc); };
  // Decodes this thread's units of step `step` into decoded tile step % 2.
  auto decode = [&](int step, const uint32_t* sc) {
#pragma unroll
    for (int v = 0; v < kUnits; ++v) {
      const int u = t + v * kThreads, br = u >> 1, half = u & 1;
      const uint4 q = *reinterpret_cast<const uint4*>(sr + (step % kStages) * kRTile + u * 16);
      uint32_t sc0, sc1;
      scale_pairs_up(sc[v], units.e4m3[v], sc0, sc1);
      unsigned char* tile = gbase + kStages * kATile + (step & 1) * kBTile;
      const uint32_t words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int part = 0; part < 4; ++part) {
        uint32_t out[4];
        decode8_pairs(words[part], part < 2 ? sc0 : sc1, out);
        *reinterpret_cast<uint4*>(tile + swz(br, half * 4 + part)) = make_uint4(out[0], out[1], out[2], out[3]);
      }
    }
  };

  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

  // Prologue: steps 0 .. kStages-2 in flight, step 0 decoded.
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < nk) issue(st);
    mma::cp_commit();
  }
  uint32_t sc[kUnits];
  load_scales(0, sc);
  mma::cp_wait<kStages - 2>();
  decode(0, sc);
  if (nk > 1) load_scales(1, sc);

  for (int s = 0; s < nk; ++s) {
    mma::cp_wait<kStages - 3>();  // step s+1's copies of this thread are in
    fence_proxy_async();          // this thread's copies and decode stores, visible to the tensor cores
    __syncthreads();              // ... of every thread; step s-1's wgmma are done (waited below)
    const uint32_t a_tile = sa + (s % kStages) * kATile + wgi * 64 * 128;
    const uint32_t b_tile = sb + (s & 1) * kBTile;
    if (wg_rows) {
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kBK / 16; ++ks) wgmma_m64n256k16(acc, desc(a_tile + ks * 32), desc(b_tile + ks * 32));
      wgmma_commit();
    }
    // While the tensor cores run: the next step's weights and a later step's copies.
    if (s + 1 < nk) decode(s + 1, sc);
    if (s + kStages - 1 < nk) issue(s + kStages - 1);
    mma::cp_commit();
    if (s + 2 < nk) load_scales(s + 2, sc);
    wgmma_wait0();  // a no-op with nothing committed; unconditional so ptxas sees every path wait
#pragma unroll
    for (int i = 0; i < 128; ++i) fence_reg(acc[i]);
  }
  mma::cp_wait<0>();

  if (wg_rows) wg_store<kMode>(p, job, n0, acc, wgi, warp, lane, mma_fp4::kScaleDown);
}

}  // namespace
}  // namespace seatrt::cuda
