// The prefill linear with no weight decode in its loop: an NVFP4 weight is
// expanded once per call to a BF16 copy (expand_fp4_kernel, into the
// caller's scratch), and gemm_bf16w_kernel multiplies BF16 x by a BF16
// weight, both copied by cp.async.  Dense BF16 weights (the router) take the
// GEMM directly; linear_glu's gate and up take it together, with act(gate) *
// up formed in the epilogue.
//
// Why: gemm_wgmma_wide.cuh decodes every weight tile again for each 256-row
// block of x (32 times at 8k tokens) in the warps that issue the wgmma, and
// stays bound by instruction issue (NOTES-prefill.md run 6).  Expanding costs
// one pass over the weight (read 4.5 bits, write 16 per weight: ~46 MB for
// the largest Linear, ~15 us); the loop is then copies and wgmma only.
// Measured (NOTES-prefill.md run 7): the Linears of an 8k prefill 393 -> 469
// TFLOP/s; what bounds this loop now (a barrier and a wait per 64-deep step)
// was not profiled.
//
// Exactness: the expansion is decode8_pairs, the wide kernel's decode, so
// the BF16 weights (fp4 * scale * 2^-26) and the products are the same; the
// epilogue multiplies by `up` (2^26 for an expanded weight, 1 for a dense
// one) and applies the global divisor in fp32, as wg_store does.
//
// Block: 256 x-rows x 128 weight rows, four warpgroups (512 threads) of
// m64n128k16 (gemm_wgmma_wide.cuh's wgmma_m64n128k16), K steps of 64; or,
// where 256-row tiles would leave SMs idle, 64 x-rows and one warpgroup.
// Shared memory: kStages stages of [A 256 (64) x 64 | B 128 x 64] BF16 in
// the 128-byte swizzle (48 (24) KiB a stage).  Iteration s: wait for this thread's
// copies of step s, fence them to the async proxy, barrier; issue step s's
// wgmma; issue the copies of step s + kStages - 2 into the slot step s - 2
// used; wait until at most one wgmma group (step s's) is pending, so step s's
// MMAs overlap the next iteration's wait and barrier.  The slot written in
// iteration s was read by step s - 2, whose wgmma every warpgroup finished
// before the barrier of iteration s (it waited with one group pending at the
// end of iteration s - 1).
#pragma once

#include "gemm_wgmma_wide.cuh"

namespace seatrt::cuda {
namespace {
namespace bw {

constexpr int kBN = 128, kBK = 64, kStages = 4;
constexpr int kBTile = kBN * 128;  // bytes of one weight stage
constexpr int kExpandThreads = 256;

// The block's shape for kWG warpgroups (4: the default 256-row tile; 1: a
// 64-row tile for launches too small to fill the GPU with 256-row tiles,
// such as the router's 128 outputs).
template <int kWG>
struct Tile {
  static constexpr int kThreads = 128 * kWG, kBM = 64 * kWG;
  static constexpr int kATile = kBM * 128;                             // bytes of one activation stage
  static constexpr int kSmem = kStages * (kATile + kBTile) + 1024;     // + alignment slack
  static constexpr int kACopies = kBM * 8 / kThreads;                  // 16-byte copies per thread and step
  static constexpr int kBCopies = kBN * 8 / kThreads;
};

__device__ __forceinline__ void wgmma_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); }

}  // namespace bw

// out[r, :] (BF16, rows of k) = the FP4 weight w's row r times its group
// scales, times 2^-26 (decode8_pairs), for r < n; one thread per 16-code
// scale group.
__global__ void __launch_bounds__(bw::kExpandThreads) expand_fp4_kernel(WeightRef w, int64_t n, int64_t k,
                                                                      __nv_bfloat16* out) {
  const int64_t groups_per_row = k / 16;
  const int64_t g = int64_t(blockIdx.x) * bw::kExpandThreads + threadIdx.x;
  if (g >= n * groups_per_row) return;
  const int64_t row = g / groups_per_row, gc = g % groups_per_row;
  const bool e4m3 = w.kind == int32_t(WeightKind::Fp4E4m3Scales);
  const uint2 q = *reinterpret_cast<const uint2*>(static_cast<const unsigned char*>(w.data) + row * w.data_row_bytes +
                                                  gc * 8);
  const char* srow = static_cast<const char*>(w.scales) + row * w.scale_row_elems * (e4m3 ? 1 : 2);
  const uint32_t raw = e4m3 ? uint32_t(reinterpret_cast<const unsigned char*>(srow)[gc])
                            : uint32_t(reinterpret_cast<const unsigned short*>(srow)[gc]);
  const uint32_t sc = wgw::group_scale_up(raw, e4m3);
  uint32_t lo[4], hi[4];
  wg::decode8_pairs(q.x, sc, lo);
  wg::decode8_pairs(q.y, sc, hi);
  uint4* dst = reinterpret_cast<uint4*>(out + row * k + gc * 16);
  dst[0] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
  dst[1] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
}

// Plain linear: out = x * W^T * up / global_divisor, W = p.w.data as BF16
// rows of p.w.data_row_bytes (16-byte aligned), x BF16 with 16-byte rows,
// p.k % 64 == 0.  kGlu: out = act(x * G^T * up / gate divisor) * (x * U^T *
// up / up divisor) with G = p.w, U = p.w_up (same layout): the weight tile's
// rows 0-63 are gate rows n0.., 64-127 the same up rows, and wg_store's GLU
// epilogue pairs them in registers (p.n = the intermediate size).
// kWG: see bw::Tile.
template <bool kGlu, int kWG>
__global__ void __launch_bounds__(bw::Tile<kWG>::kThreads, 1) gemm_bf16w_kernel(TcParams p, float up) {
  using namespace bw;
  using T = Tile<kWG>;
  constexpr int kThreads = T::kThreads, kBM = T::kBM, kATile = T::kATile, kACopies = T::kACopies,
                kBCopies = T::kBCopies;
  extern __shared__ __align__(1024) unsigned char bw_dyn[];
  const uint32_t base = (mma::smem_addr(bw_dyn) + 1023u) & ~1023u;  // the swizzle is a function of the address
  const uint32_t sa = base, sb = base + kStages * kATile;

  TcJob job;
  if (!wg_job<int(TcMode::Linear), kBM>(p, job)) return;
  job.w_up = p.w_up;
  const int t = threadIdx.x, wgi = t >> 7, warp = (t >> 5) & 3, lane = t & 31;
  const int64_t n0 = int64_t(blockIdx.x) * (kGlu ? kBN / 2 : kBN);
  const int ch = t & 7;  // the 16-byte chunk (8 BF16 along K) this thread copies in each row

  // This thread's rows: A rows (t >> 3) + kThreads / 8 * i, weight tile
  // rows the same for i < kBCopies (GLU: tile rows 0-63 are gate rows n0..,
  // 64-127 the same up rows).
  const __nv_bfloat16* arow[kACopies];
  const unsigned char* brow[kBCopies];
  bool bok[kBCopies];
#pragma unroll
  for (int i = 0; i < kACopies; ++i) {
    const int r = (t >> 3) + i * (kThreads / 8);
    arow[i] = r < job.rows ? static_cast<const __nv_bfloat16*>(p.x.data) + (job.m0 + r) * p.x.row_stride + ch * 8
                           : nullptr;
  }
#pragma unroll
  for (int i = 0; i < kBCopies; ++i) {
    const int r = (t >> 3) + i * (kThreads / 8);
    const WeightRef& w = kGlu && r >= kBN / 2 ? p.w_up : p.w;
    const int64_t row = n0 + (kGlu ? r % (kBN / 2) : r);
    bok[i] = row < p.n;
    brow[i] = static_cast<const unsigned char*>(w.data) + (bok[i] ? row : 0) * w.data_row_bytes + ch * 16;
  }

  const int nk = static_cast<int>(p.k / kBK);
  auto issue = [&](int step) {
    const int slot = step % kStages;
    const int64_t k0 = int64_t(step) * kBK;
#pragma unroll
    for (int i = 0; i < kACopies; ++i) {
      const int r = (t >> 3) + i * (kThreads / 8);
      mma::cp_async16(sa + slot * kATile + wg::swz(r, ch), arow[i] ? arow[i] + k0 : p.x.data, arow[i] != nullptr);
    }
#pragma unroll
    for (int i = 0; i < kBCopies; ++i) {
      const int r = (t >> 3) + i * (kThreads / 8);
      mma::cp_async16(sb + slot * kBTile + wg::swz(r, ch), brow[i] + k0 * 2, bok[i]);
    }
  };

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;

  // Prologue: steps 0 .. kStages-3 in flight (one commit group each).
#pragma unroll
  for (int st = 0; st < kStages - 2; ++st) {
    if (st < nk) issue(st);
    mma::cp_commit();
  }
  for (int s = 0; s < nk; ++s) {
    mma::cp_wait<kStages - 3>();  // step s's copies of this thread are in
    wg::fence_proxy_async();      // ... and visible to the tensor cores
    __syncthreads();              // ... of every thread; step s-2's wgmma are done everywhere
    const uint32_t a_tile = sa + (s % kStages) * kATile + wgi * 64 * 128;
    const uint32_t b_tile = sb + (s % kStages) * kBTile;
    wg::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks)
      wgw::wgmma_m64n128k16(acc, wg::desc(a_tile + ks * 32), wg::desc(b_tile + ks * 32));
    wg::wgmma_commit();
    if (s + kStages - 2 < nk) issue(s + kStages - 2);
    mma::cp_commit();  // possibly empty: keeps the group count uniform
    wgmma_wait1();     // step s-1's wgmma are done; step s's may still run
  }
  wg::wgmma_wait0();
#pragma unroll
  for (int i = 0; i < 64; ++i) wg::fence_reg(acc[i]);
  mma::cp_wait<0>();
  wg_store<int(kGlu ? TcMode::MoeGateUp : TcMode::Linear), kBN>(p, job, n0, acc, wgi, warp, lane, up);
}

// Bytes of the BF16 expansion of an n x k FP4 weight (256-byte aligned).
inline size_t bf16w_bytes(int64_t n, int64_t k) { return (size_t(n) * size_t(k) * 2 + 255) / 256 * 256; }

// Expands FP4 weight w (n x k) into `expanded` and points w there.
inline int expand_to(cudaStream_t st, WeightRef& w, int64_t n, int64_t k, void* expanded) {
  const int64_t groups = n * (k / 16);
  expand_fp4_kernel<<<static_cast<unsigned>(ceil_div(groups, bw::kExpandThreads)), bw::kExpandThreads, 0, st>>>(
      w, n, k, static_cast<__nv_bfloat16*>(expanded));
  w.data = expanded;
  w.data_row_bytes = k * 2;
  return last_error();
}

template <bool kGlu, int kWG>
int launch_bf16w_tile(cudaStream_t st, const TcParams& q, float up) {
  using T = bw::Tile<kWG>;
  static bool opted_in = false;  // once per instantiation and file (internal linkage)
  if (!opted_in) {
    if (cudaError_t e = cudaFuncSetAttribute(gemm_bf16w_kernel<kGlu, kWG>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmem))
      return static_cast<int>(e);
    opted_in = true;
  }
  const dim3 grid(static_cast<unsigned>(ceil_div(q.n, kGlu ? bw::kBN / 2 : bw::kBN)),
                  static_cast<unsigned>(ceil_div(q.x.rows, T::kBM)));
  gemm_bf16w_kernel<kGlu, kWG><<<grid, T::kThreads, T::kSmem, st>>>(q, up);
  return last_error();
}

// The 256-row tile, or the 64-row one where 256-row tiles would keep at most
// a quarter of the SMs busy (the router: 128 outputs, 32 blocks at 8k rows).
// The 64-row tile runs one warpgroup per block (two per SM): at 2k rows it
// made the k/v projections (128 blocks of 256 rows) slower, so the bar is
// low.  SEATRT_PREFILL_BF16W_TILE=64 or 256 forces one (tests, benchmarks).
template <bool kGlu>
int launch_bf16w_kernel(cudaStream_t st, const TcParams& q, float up) {
  static const int forced = [] {
    const char* v = std::getenv("SEATRT_PREFILL_BF16W_TILE");
    return v ? std::atoi(v) : 0;
  }();
  static const int sms = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 132;
    return n;
  }();
  const int64_t big_blocks = ceil_div(q.n, kGlu ? bw::kBN / 2 : bw::kBN) * ceil_div(q.x.rows, bw::Tile<4>::kBM);
  // (At most 64 rows -- lm_head_gemm's decode rows -- a 256-row tile would
  // be three quarters padding.)
  const bool few_rows = q.x.rows <= bw::Tile<1>::kBM;
  const bool small = (forced == 64 || (forced != 256 && (big_blocks * 4 <= sms || few_rows))) &&
                     ceil_div(q.x.rows, bw::Tile<1>::kBM) <= 65535;  // the grid's y limit
  return small ? launch_bf16w_tile<kGlu, 1>(st, q, up) : launch_bf16w_tile<kGlu, 4>(st, q, up);
}

// The plain linear through the BF16 path: an FP4 weight is expanded into
// `expanded` (bf16w_bytes(p.n, p.k) bytes, stream-ordered scratch) first; a
// dense BF16 weight is read as is (`expanded` unused).
inline int launch_gemm_bf16w(cudaStream_t st, const TcParams& p, void* expanded) {
  TcParams q = p;
  float up = 1.0f;
  if (p.w.kind != int32_t(WeightKind::DenseBf16)) {
    if (int e = expand_to(st, q.w, p.n, p.k, expanded)) return e;
    up = mma_fp4::kScaleDown;
  }
  return launch_bf16w_kernel<false>(st, q, up);
}

// act(x * gate^T) * (x * up^T) through the BF16 path, both FP4 (p.w gate,
// p.w_up up, p.n the intermediate size): expanded into `expanded` (gate) and
// right after it (up), bf16w_bytes(p.n, p.k) bytes each.
inline int launch_gemm_bf16w_glu(cudaStream_t st, const TcParams& p, void* expanded) {
  TcParams q = p;
  if (int e = expand_to(st, q.w, p.n, p.k, expanded)) return e;
  if (int e = expand_to(st, q.w_up, p.n, p.k, static_cast<char*>(expanded) + bf16w_bytes(p.n, p.k))) return e;
  return launch_bf16w_kernel<true>(st, q, mma_fp4::kScaleDown);
}

}  // namespace
}  // namespace seatrt::cuda
