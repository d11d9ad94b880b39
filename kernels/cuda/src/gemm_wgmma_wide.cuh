// The prefill GEMM on a 256 x 128 tile (x rows x weight rows): gemm_wgmma.cuh's
// pipeline and decode with half the weight tile per K step and twice the
// warps.  Four warpgroups (512 threads) each own 64 x-rows x 128 weight rows
// (wgmma m64n128k16, 64 fp32 accumulators per thread).  The three modes of
// gemm_wgmma.cuh: the plain linear (the default) and the grouped MoE's
// gate/up (64 gate and the same 64 up rows per block) and down, on the
// grouping kernel's tiles of up to 256 rows of one expert.
//
// Why: the 128 x 256 core is bound by instruction issue in the FP4 decode
// (NOTES-prefill.md run 6: tensor pipe ~29% busy, ~530 instructions per warp
// and K step at 5.6 cycles each, two warps per scheduler).  A decoded weight
// tile here serves 256 x-rows instead of 128, so a K step of the same MMA
// work (256 x 128 x 64) decodes half the weights (8,192 codes: one 16-code
// group per thread), and four warps per scheduler instead of two hide each
// other's latencies.  For the MoE the cost is padding: an expert's last tile
// is part full (a warpgroup with no rows skips its wgmma, but the decode is
// the block's), so k_moe_grouped.cu takes this tile only where the experts
// average enough rows (NOTES-prefill.md run 7).
//
// Shared memory (128-byte swizzle as gemm_wgmma.cuh): kStages activation
// tiles of 256 x 64 BF16 (32 KiB), kStages raw FP4 slots of 128 x 32 bytes,
// 2 decoded weight tiles of 128 x 64 BF16 (16 KiB).  Each thread copies (8
// bytes, cp.async.ca) and decodes the same 16 codes, so the raw bytes need no
// barrier of their own; the step's barrier publishes the decoded tile and
// the activations, as in gemm_wgmma_kernel.
#pragma once

#include "gemm_wgmma.cuh"

namespace seatrt::cuda {
namespace {
namespace wgw {

constexpr int kBM = 256, kBN = 128, kBK = 64, kStages = 4, kThreads = 512;
constexpr int kATile = kBM * 128;  // bytes of one activation stage
constexpr int kRTile = kBN * 32;   // bytes of one raw FP4 stage
constexpr int kBTile = kBN * 128;  // bytes of one decoded weight tile
constexpr int kSmem = kStages * (kATile + kRTile) + 2 * kBTile + 1024;  // + alignment slack
constexpr int kACopies = kBM * 8 / kThreads;                             // 16-byte activation copies per thread
static_assert(kBN * 4 == kThreads, "one 16-code group per thread and step");

// 8 bytes global -> shared (through L1); `valid` false writes 8 zeros.
__device__ __forceinline__ void cp_async8(uint32_t dst, const void* src, bool valid) {
  const int n = valid ? 8 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(n));
}

// d (a warpgroup's 64 x 128 fp32 tile: 64 accumulators per thread) += A (64
// x 16, descriptor a) * B^T (B: 128 x 16, descriptor b); scale-d is 1.
__device__ __forceinline__ void wgmma_m64n128k16(float* d, uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      WGMMA_R64
      "}, "
      "%64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : WGMMA_D64
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// One group scale (e4m3 byte or BF16) * 2^100 as a BF16 pair.
__device__ __forceinline__ uint32_t group_scale_up(uint32_t raw, bool e4m3) {
  const float s = e4m3 ? e4m3_to_float(static_cast<uint8_t>(raw)) : __uint_as_float(raw << 16);
  const __nv_bfloat162 b = __float2bfloat162_rn(s * mma_fp4::kScaleUp);
  return *reinterpret_cast<const uint32_t*>(&b);
}

}  // namespace wgw

// kMode: TcMode::Linear, MoeGateUp or MoeDown (the MoE's row tiles are then
// the grouping kernel's tiles of up to kBM rows).
template <int kMode>
__global__ void __launch_bounds__(wgw::kThreads, 1) gemm_wgmma_wide_kernel(TcParams p) {
  using namespace wgw;
  constexpr bool kGlu = kMode == int(TcMode::MoeGateUp);
  extern __shared__ __align__(1024) unsigned char wgw_dyn[];
  __shared__ const __nv_bfloat16* arows[kBM];
  const uint32_t raw_base = mma::smem_addr(wgw_dyn);
  const uint32_t base = (raw_base + 1023u) & ~1023u;  // the swizzle is a function of the address
  const uint32_t sa = base;                                // kStages activation stages
  const uint32_t sr = base + kStages * kATile;             // kStages raw stages
  const uint32_t sb = sr + kStages * kRTile;               // 2 decoded weight tiles
  unsigned char* const gsr = wgw_dyn + (sr - raw_base);
  unsigned char* const gsb = wgw_dyn + (sb - raw_base);

  TcJob job;
  if (!wg_job<kMode, kBM>(p, job)) return;
  const int t = threadIdx.x, wgi = t >> 7, warp = (t >> 5) & 3, lane = t & 31;
  // First output column of the block (GLU: 64 outputs, each a gate and an up row).
  const int64_t n0 = int64_t(blockIdx.x) * (kGlu ? kBN / 2 : kBN);
  for (int r = t; r < kBM; r += kThreads) arows[r] = tc_a_row(p, job, r);
  // A warpgroup whose 64 rows are all past the tile's skips its wgmma (the
  // last tile of an expert is often part full); the decode is shared.  The
  // test is made warp-uniform through a shuffle (ptxas serializes wgmma
  // under a branch it cannot prove uniform); the plain linear has no test.
  const bool wg_rows =
      kMode == int(TcMode::Linear) || __shfl_sync(0xffffffffu, int(wgi * 64 < job.rows), 0) != 0;

  // This thread's 16 codes of each step: weight tile row br, columns
  // 16 * qc .. +15 (one scale group).  GLU: tile rows 0-63 are gate rows
  // n0.., 64-127 the up rows n0...
  const int br = t >> 2, qc = t & 3;
  const WeightRef w = (kGlu && br >= kBN / 2) ? job.w_up : job.w;
  const int64_t wrow = n0 + (kGlu ? br % (kBN / 2) : br);
  const bool wok = wrow < p.n;
  const bool e4m3 = w.kind == int32_t(WeightKind::Fp4E4m3Scales);
  const int64_t rr = wok ? wrow : 0;
  const unsigned char* const wq = static_cast<const unsigned char*>(w.data) + rr * w.data_row_bytes + qc * 8;
  const char* const ws = static_cast<const char*>(w.scales) + rr * w.scale_row_elems * (e4m3 ? 1 : 2);
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
      mma::cp_async16(sa + slot * kATile + wg::swz(r, a_ch), src ? src + k0 + a_ch * 8 : p.x.data, src != nullptr);
    }
    cp_async8(sr + slot * kRTile + t * 8, wq + k0 / 2, wok);
  };
  auto load_scale = [&](int step) -> uint32_t {
    const int64_t g = int64_t(step) * 4 + qc;
    if (!wok) return 0u;
    return e4m3 ? uint32_t(__ldg(reinterpret_cast<const unsigned char*>(ws + g)))
                : uint32_t(__ldg(reinterpret_cast<const unsigned short*>(ws + 2 * g)));
  };
  // Decodes this thread's 16 codes of step `step` into decoded tile step % 2.
  auto decode = [&](int step, uint32_t scale_raw) {
    const uint2 q = *reinterpret_cast<const uint2*>(gsr + (step % kStages) * kRTile + t * 8);
    const uint32_t sc = group_scale_up(scale_raw, e4m3);
    unsigned char* const tile = gsb + (step & 1) * kBTile;
    uint32_t out[4];
    wg::decode8_pairs(q.x, sc, out);
    *reinterpret_cast<uint4*>(tile + wg::swz(br, 2 * qc)) = make_uint4(out[0], out[1], out[2], out[3]);
    wg::decode8_pairs(q.y, sc, out);
    *reinterpret_cast<uint4*>(tile + wg::swz(br, 2 * qc + 1)) = make_uint4(out[0], out[1], out[2], out[3]);
  };

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;

  // Prologue: steps 0 .. kStages-2 in flight, step 0 decoded.
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < nk) issue(st);
    mma::cp_commit();
  }
  uint32_t sc = load_scale(0);
  mma::cp_wait<kStages - 2>();
  decode(0, sc);
  if (nk > 1) sc = load_scale(1);

  for (int s = 0; s < nk; ++s) {
    mma::cp_wait<kStages - 3>();  // step s+1's copies of this thread are in
    wg::fence_proxy_async();      // this thread's copies and decode stores, visible to the tensor cores
    __syncthreads();              // ... of every thread; step s-1's wgmma are done (waited below)
    const uint32_t a_tile = sa + (s % kStages) * kATile + wgi * 64 * 128;
    const uint32_t b_tile = sb + (s & 1) * kBTile;
    if (wg_rows) {
      wg::wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kBK / 16; ++ks) wgmma_m64n128k16(acc, wg::desc(a_tile + ks * 32), wg::desc(b_tile + ks * 32));
      wg::wgmma_commit();
    }
    // While the tensor cores run: the next step's weights and a later step's copies.
    if (s + 1 < nk) decode(s + 1, sc);
    if (s + kStages - 1 < nk) issue(s + kStages - 1);
    mma::cp_commit();
    if (s + 2 < nk) sc = load_scale(s + 2);
    wg::wgmma_wait0();  // a no-op with nothing committed; unconditional so ptxas sees every path wait
#pragma unroll
    for (int i = 0; i < 64; ++i) wg::fence_reg(acc[i]);
  }
  mma::cp_wait<0>();
  if (wg_rows) wg_store<kMode, kBN>(p, job, n0, acc, wgi, warp, lane, mma_fp4::kScaleDown);
}

// Launches gemm_wgmma_wide_kernel<kMode> on `grid` (the opt-in above 48 KiB
// of shared memory is set once per instantiation and file: internal linkage).
template <int kMode>
int launch_gemm_wgmma_wide_grid(cudaStream_t st, dim3 grid, const TcParams& p) {
  static bool opted_in = false;
  if (!opted_in) {
    if (cudaError_t e =
            cudaFuncSetAttribute(gemm_wgmma_wide_kernel<kMode>, cudaFuncAttributeMaxDynamicSharedMemorySize, wgw::kSmem))
      return static_cast<int>(e);
    opted_in = true;
  }
  gemm_wgmma_wide_kernel<kMode><<<grid, wgw::kThreads, wgw::kSmem, st>>>(p);
  return last_error();
}

// Plain linear on the wide tile.
inline int launch_gemm_wgmma_wide(cudaStream_t st, const TcParams& p) {
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, wgw::kBN)), static_cast<unsigned>(ceil_div(p.x.rows, wgw::kBM)));
  return launch_gemm_wgmma_wide_grid<int(TcMode::Linear)>(st, grid, p);
}

}  // namespace
}  // namespace seatrt::cuda
