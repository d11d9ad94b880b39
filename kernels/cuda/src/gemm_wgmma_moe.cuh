// An opt-in variant of the MoE's grouped GEMMs (SEATRT_PREFILL_MOE=bf16w):
// every expert's FP4 weights are decoded to BF16 ONCE per call into scratch
// memory, and the grouped GEMMs run on a decode-free wgmma kernel that
// streams both operands (x rows, BF16 weight rows) by cp.async into the
// 128-byte-swizzled tiles gemm_wgmma.cuh's descriptors read.
// NOT YET RUN ON A DEVICE (written after device run 5, NOTES-prefill.md).
//
// Why: run 5 showed the grouped wgmma GEMMs run at the plain linear's rate
// per block, and that a block's time is set by the per-step FP4 decode,
// barrier and wgmma wait, not by its MMAs: the per-expert row padding
// (x1.125 of the blocks at 8k tokens, x1.5 at 2k) costs whole blocks.  The
// decode is redone for every row tile of an expert (~4.5 at 8k); done once,
// it is a memory-bound pass (~1.5 GB of BF16 written per layer of 128
// experts at the model's shapes), and the GEMM's K loop is copies + wgmma.
//
// Exactness: the expansion is the same decode8 (BF16 of fp4 x group scale
// x 2^14 / 2^14) as every other path; the global divisor stays in the fp32
// epilogue.  The epilogues are gemm_wgmma.cuh's (GLU: act(gate) * up into
// BF16 h in sorted order; down: times the router weight into fp32 rows per
// assignment).  No atomics: bit-identical reruns.
//
// Block: 128 x-rows (one TcTile) x 256 weight rows (GLU: 128 gate rows then
// the same 128 up rows), two warpgroups of m64n256k16, K steps of 64,
// kStages stages of both the activation tile (16 KiB) and the weight tile
// (32 KiB): 192 KiB + alignment.  Iteration s: wait for step s's copies,
// fence to the async proxy, barrier; four wgmma; issue step s+S-1's copies
// (into the stage step s-1 used: its wgmma were waited before the barrier);
// wait for the wgmma.
#pragma once

#include "gemm_wgmma.cuh"

namespace seatrt::cuda {
namespace {
namespace wgb {

constexpr int kStages = 4;
constexpr int kWTile = wg::kBN * 128;  // bytes of one BF16 weight stage (256 rows x 64)
constexpr int kSmem = kStages * (wg::kATile + kWTile) + 1024;
constexpr int kWCopies = wg::kBN * 8 / wg::kThreads;  // 16-byte weight copies per thread and step

}  // namespace wgb

// The grouped GEMM's parameters and the expanded weights: wb = [E][n][k]
// BF16 (gate/up: the gate matrices, wb_up the up matrices; down: down).
struct WgBf16Moe {
  TcParams p;
  const __nv_bfloat16* wb = nullptr;
  const __nv_bfloat16* wb_up = nullptr;
};

// FP4 expert weights (table[0..E-1], each rows x k) to BF16 rows, 32 weights
// (16 raw bytes, two group scales) per thread and iteration; expert =
// blockIdx.y, 32-bit index math within the expert (rows * k / 32 < 2^31,
// checked by the launcher).
__global__ void moe_expand_bf16_kernel(const WeightRef* table, int64_t rows, int64_t k, __nv_bfloat16* out) {
  const uint32_t per_row = static_cast<uint32_t>(k / 32), n = static_cast<uint32_t>(rows) * per_row;
  const WeightRef& w = table[blockIdx.y];
  const bool e4m3 = w.kind == int32_t(WeightKind::Fp4E4m3Scales);
  __nv_bfloat16* const base = out + int64_t(blockIdx.y) * rows * k;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint32_t r = i / per_row, c = i % per_row;
    const uint4 q = __ldg(reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(w.data) +
                                                         int64_t(r) * w.data_row_bytes + c * 16));
    const int64_t g = int64_t(r) * w.scale_row_elems + c * 2;  // the unit's first group scale
    const uint32_t raw = e4m3 ? uint32_t(__ldg(reinterpret_cast<const unsigned short*>(
                                    static_cast<const unsigned char*>(w.scales) + g)))
                              : __ldg(reinterpret_cast<const unsigned int*>(static_cast<const __nv_bfloat16*>(w.scales) + g));
    float s0, s1;
    mma::scale_pair(raw, e4m3, s0, s1);
    uint32_t o[16];
    tc::decode8(q.x, s0, o);
    tc::decode8(q.y, s0, o + 4);
    tc::decode8(q.z, s1, o + 8);
    tc::decode8(q.w, s1, o + 12);
    uint4* dst = reinterpret_cast<uint4*>(base + int64_t(r) * k + c * 32);
#pragma unroll
    for (int j = 0; j < 4; ++j) dst[j] = make_uint4(o[4 * j], o[4 * j + 1], o[4 * j + 2], o[4 * j + 3]);
  }
}

inline int launch_moe_expand_bf16(cudaStream_t st, const WeightRef* table, int32_t experts, int64_t rows, int64_t k,
                                  __nv_bfloat16* out) {
  const int64_t units = rows * (k / 32);
  if (units >= (int64_t(1) << 31) || experts > 65535) return int(cudaErrorInvalidValue);
  int64_t blocks = ceil_div(units, 256);
  if (blocks > 64) blocks = 64;  // x 128 experts: 8192 blocks, grid-stride within the expert
  moe_expand_bf16_kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(experts)), 256, 0, st>>>(
      table, rows, k, out);
  return last_error();
}

template <bool kGlu>
__global__ void __launch_bounds__(wg::kThreads, 1) gemm_wgmma_moe_bf16_kernel(WgBf16Moe q) {
  using namespace wg;
  const TcParams& p = q.p;
  extern __shared__ __align__(1024) unsigned char wgb_dyn[];
  __shared__ const __nv_bfloat16* arows[kBM];
  __shared__ const __nv_bfloat16* brows[kBN];
  const uint32_t raw_base = mma::smem_addr(wgb_dyn);
  const uint32_t sa = (raw_base + 1023u) & ~1023u;  // kStages activation stages
  const uint32_t sb = sa + wgb::kStages * kATile;    // kStages weight stages

  if (int(blockIdx.y) >= *p.num_tiles) return;  // the grid is sized for the most tiles possible
  const TcTile tile = p.tiles[blockIdx.y];
  TcJob job;
  job.w = p.table[tile.expert];
  if (kGlu) job.w_up = p.table_up[tile.expert];
  job.m0 = tile.first;
  job.rows = tile.rows;
  const int t = threadIdx.x, wgi = t >> 7, warp = (t >> 5) & 3, lane = t & 31;
  const int64_t n0 = int64_t(blockIdx.x) * (kGlu ? kBN / 2 : kBN);
  for (int r = t; r < kBM; r += kThreads) arows[r] = tc_a_row(p, job, r);
  for (int br = t; br < kBN; br += kThreads) {
    const bool up = kGlu && br >= kBN / 2;
    const int64_t row = n0 + (kGlu ? br % (kBN / 2) : br);
    brows[br] = row < p.n ? (up ? q.wb_up : q.wb) + (int64_t(tile.expert) * p.n + row) * p.k : nullptr;
  }
  __syncthreads();

  const int nk = static_cast<int>(p.k / kBK);
  const int ch = t & 7;  // this thread's 16-byte chunk of every row it copies
  auto issue = [&](int step) {
    const int slot = step % wgb::kStages;
    const int64_t k0 = int64_t(step) * kBK + ch * 8;
#pragma unroll
    for (int i = 0; i < kACopies; ++i) {
      const int r = (t >> 3) + i * (kThreads / 8);
      const __nv_bfloat16* src = arows[r];
      mma::cp_async16(sa + slot * kATile + swz(r, ch), src ? src + k0 : p.x.data, src != nullptr);
    }
#pragma unroll
    for (int i = 0; i < wgb::kWCopies; ++i) {
      const int r = (t >> 3) + i * (kThreads / 8);
      const __nv_bfloat16* src = brows[r];
      mma::cp_async16(sb + slot * wgb::kWTile + swz(r, ch), src ? src + k0 : q.wb, src != nullptr);
    }
  };

  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

#pragma unroll
  for (int st = 0; st < wgb::kStages - 1; ++st) {
    if (st < nk) issue(st);
    mma::cp_commit();
  }
  // (Skipping the MMAs of a warpgroup whose rows are all padding made ptxas
  // serialize every wgmma, C7518: wgmma in a divergent path.  Not done.)
  for (int s = 0; s < nk; ++s) {
    mma::cp_wait<wgb::kStages - 2>();  // committed: steps 0 .. s+S-2; step s must be in
    fence_proxy_async();               // this thread's copies, visible to the tensor cores
    __syncthreads();                   // ... of every thread; step s-1's wgmma are done (waited below)
    const int slot = s % wgb::kStages;
    const uint32_t a_tile = sa + slot * kATile + wgi * 64 * 128, b_tile = sb + slot * wgb::kWTile;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks) wgmma_m64n256k16(acc, desc(a_tile + ks * 32), desc(b_tile + ks * 32));
    wgmma_commit();
    if (s + wgb::kStages - 1 < nk) issue(s + wgb::kStages - 1);
    mma::cp_commit();  // possibly empty: keeps the group count uniform
    wgmma_wait0();
#pragma unroll
    for (int i = 0; i < 128; ++i) fence_reg(acc[i]);
  }
  mma::cp_wait<0>();

  // Epilogue as gemm_wgmma_kernel's MoE modes.
  const int g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int r = wgi * 64 + warp * 16 + g + hh * 8;
    if (r >= job.rows) continue;
    int64_t row = job.m0 + r;
    if constexpr (kGlu) {
      const float gdiv = job.w.global_divisor, udiv = job.w_up.global_divisor;
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        const float* ga = &acc[4 * j + 2 * hh];
        const float* ua = &acc[4 * (j + 16) + 2 * hh];
        const float v0 = activation(p.act, ga[0] / gdiv) * (ua[0] / udiv);
        const float v1 = activation(p.act, ga[1] / gdiv) * (ua[1] / udiv);
        mma::store2(p.out, p.n, row, n0 + j * 8 + 2 * tq, v0, v1);
      }
    } else {
      row = p.sorted[row];
      const float scale = p.row_weight[row], div = job.w.global_divisor;
#pragma unroll
      for (int j = 0; j < 32; ++j)
        mma::store2(p.out, p.n, row, n0 + j * 8 + 2 * tq, acc[4 * j + 2 * hh] / div * scale,
                    acc[4 * j + 2 * hh + 1] / div * scale);
    }
  }
}

// Grouped gate/up (q.p.mode MoeGateUp) or down over up to `max_tiles` row
// tiles, weights already expanded.
inline int launch_gemm_wgmma_moe_bf16(cudaStream_t st, const WgBf16Moe& q, unsigned max_tiles) {
  const bool glu = q.p.mode == TcMode::MoeGateUp;
  static bool opted_in[2] = {false, false};
  if (!opted_in[glu]) {
    if (cudaError_t e = cudaFuncSetAttribute(glu ? gemm_wgmma_moe_bf16_kernel<true> : gemm_wgmma_moe_bf16_kernel<false>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, wgb::kSmem))
      return static_cast<int>(e);
    opted_in[glu] = true;
  }
  const dim3 grid(static_cast<unsigned>(ceil_div(q.p.n, glu ? wg::kBN / 2 : wg::kBN)), max_tiles);
  if (glu)
    gemm_wgmma_moe_bf16_kernel<true><<<grid, wg::kThreads, wgb::kSmem, st>>>(q);
  else
    gemm_wgmma_moe_bf16_kernel<false><<<grid, wg::kThreads, wgb::kSmem, st>>>(q);
  return last_error();
}

}  // namespace
}  // namespace seatrt::cuda
