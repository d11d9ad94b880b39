// A warp-specialized variant of gemm_wgmma.cuh's core (opt-in,
// SEATRT_PREFILL_WGMMA=ws), kept as the starting point of the next try:
// correct, measured 10% slower (NOTES-prefill.md run 6).
#pragma once

#include "gemm_wgmma.cuh"

namespace seatrt::cuda {
namespace {
namespace wg {

template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// mbarriers of the warp-specialized kernel (shared::cta, 64-bit).  arrive
// has release and try_wait acquire semantics at CTA scope (the defaults), so
// the producer's decode stores and copies, fenced to the async proxy before
// its arrive, are visible to the consumers' wgmma after their wait.
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs)); }
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs)); }

}  // namespace wg

// The warp-specialized kernel (opt-in: SEATRT_PREFILL_WGMMA=ws; measured
// slower than the kernel above, NOTES-prefill.md run 6).  Same block tile, swizzle, descriptors, modes
// and epilogue; 384 threads in three roles:
//  - warpgroup 0, the producer: issues the activation copies and the raw
//    FP4 copies of step j (cp.async, kWsLag steps ahead), then waits for
//    step j - kWsLag's copies, decodes its weights into that stage's BF16
//    tile (decode8_pairs), fences its shared writes to the async proxy and
//    arrives on the stage's `full` barrier;
//  - warpgroups 1 and 2, the consumers (64 x-rows each): wait on `full`,
//    issue the step's four wgmma, keep one step's wgmma in flight
//    (wait_group 1) and arrive on the previous stage's `empty` barrier,
//    which the producer waits on before refilling it.
// Why (ncu, 2026-12-02, the kernel above at 8k tokens): ~3,600 cycles per K
// step of 64 against 1,024 of MMA -- the tensor pipe 27-30% busy, issue-bound
// on the decode (~600 instructions per warp and step at 0.4 IPC per
// scheduler with 128 accumulators per thread leaving little room for ILP),
// and every step's wgmma drained before the barrier.  Here the consumers
// issue almost nothing but wgmma, the producer's registers all go to the
// decode (setmaxnreg), and the pairs decode costs about half as much.
// Each producer thread copies and decodes the same raw chunks, so the raw
// slots need no barrier of their own.
namespace wg {
constexpr int kWsProducers = 128;  // one producer warpgroup (with two, wgmma's 154 registers exceed the entry cap)
constexpr int kWsThreads = kWsProducers + 256, kWsStages = 4, kWsLag = 2, kWsRaw = kWsLag + 1;
constexpr int kWsRegCap = (65536 / kWsThreads) / 8 * 8;  // registers per thread at entry
constexpr int kWsUnits = 2 * kBN / kWsProducers;    // 32-weight decode units per producer thread
constexpr int kWsACopies = kBM * 8 / kWsProducers;  // 16-byte activation copies per producer thread and step
constexpr int kWsSmem = kWsStages * (kATile + kBTile) + kWsRaw * kRTile + 1024;
// setmaxnreg moves registers within the block's allocation: 384 threads under
// __launch_bounds__(384, 1) start with 168 each (65,536 / 384, rounded down
// to a multiple of 8), so the roles' counts must fit 168 * 384 = 64,512 or
// the consumers' increase waits forever (seen: 96 + 208 hung on the device).
// 104 / 200: no spills in either role (ptxas -v, all three modes).
constexpr int kProducerRegs = 104, kConsumerRegs = 200;
static_assert(kWsProducers * kProducerRegs + 256 * kConsumerRegs <= kWsRegCap * kWsThreads,
              "setmaxnreg beyond the block's registers");
static_assert(kWsStages > kWsLag + 1, "a stage is held from its copies to its decode, plus one the consumers hold");
}  // namespace wg

template <int kMode>
__global__ void __launch_bounds__(wg::kWsThreads, 1) gemm_wgmma_ws_kernel(TcParams p) {
  constexpr bool kGlu = kMode == int(TcMode::MoeGateUp);
  using namespace wg;
  extern __shared__ __align__(1024) unsigned char wg_dyn[];
  __shared__ const __nv_bfloat16* arows[kBM];
  __shared__ __align__(8) uint64_t bars[2 * kWsStages];  // full[0..S), empty[S..2S)
  const uint32_t raw_base = mma::smem_addr(wg_dyn);
  const uint32_t base = (raw_base + 1023u) & ~1023u;
  unsigned char* const gbase = wg_dyn + (base - raw_base);
  const uint32_t sa = base;                                         // kWsStages activation tiles
  const uint32_t sb = base + kWsStages * kATile;                    // kWsStages decoded weight tiles
  unsigned char* const sr = gbase + kWsStages * (kATile + kBTile);  // kWsRaw raw slots
  const uint32_t full0 = mma::smem_addr(bars), empty0 = full0 + 8 * kWsStages;

  TcJob job;
  if (!wg_job<kMode>(p, job)) return;
  const int t = threadIdx.x;
  const int64_t n0 = int64_t(blockIdx.x) * (kGlu ? kBN / 2 : kBN);
  for (int r = t; r < kBM; r += kWsThreads) arows[r] = tc_a_row(p, job, r);
  if (t == 0) {
    for (int i = 0; i < kWsStages; ++i) {
      mbar_init(full0 + 8 * i, kWsProducers);  // every producer thread, once per step
      mbar_init(empty0 + 8 * i, 256);  // every consumer thread, once per step
    }
  }
  __syncthreads();  // arows, barriers initialised
  const int nk = static_cast<int>(p.k / kBK);

  if (t < kWsProducers) {
    setmaxnreg_dec<kProducerRegs>();
    WgUnits<kWsUnits, kWsProducers> units;
    units.init<kGlu>(p, job, n0, t);
    const auto& uq = units.q;
    const auto& uok = units.ok;
    const auto& ue4m3 = units.e4m3;
    const int a_ch = t & 7;
    auto issue = [&](int step) {
      const uint32_t a_tile = sa + (step % kWsStages) * kATile;
      const int64_t k0 = int64_t(step) * kBK;
#pragma unroll
      for (int i = 0; i < kWsACopies; ++i) {
        const int r = (t >> 3) + i * (kWsProducers / 8);
        const __nv_bfloat16* src = arows[r];
        mma::cp_async16(a_tile + swz(r, a_ch), src ? src + k0 + a_ch * 8 : p.x.data, src != nullptr);
      }
#pragma unroll
      for (int v = 0; v < kWsUnits; ++v)
        mma::cp_async16(mma::smem_addr(sr + (step % kWsRaw) * kRTile + (t + v * kWsProducers) * 16), uq[v] + k0 / 2, uok[v]);
    };
    // A unit's two group scales of a step, raw (e4m3 pair or BF16 pair).
    auto load_scales = [&](int step, uint32_t* sc) { units.load_scales(step, t, sc); };
    auto decode = [&](int step, const uint32_t* sc) {
      unsigned char* const tile = gbase + kWsStages * kATile + (step % kWsStages) * kBTile;
#pragma unroll
      for (int v = 0; v < kWsUnits; ++v) {
        const int u = t + v * kWsProducers, br = u >> 1, half = u & 1;
        const uint4 q = *reinterpret_cast<const uint4*>(sr + (step % kWsRaw) * kRTile + u * 16);
        uint32_t sc0, sc1;
        scale_pairs_up(sc[v], ue4m3[v], sc0, sc1);
        const uint32_t words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int part = 0; part < 4; ++part) {
          uint32_t out[4];
          decode8_pairs(words[part], part < 2 ? sc0 : sc1, out);
          *reinterpret_cast<uint4*>(tile + swz(br, half * 4 + part)) = make_uint4(out[0], out[1], out[2], out[3]);
        }
      }
    };
    uint32_t sc[kWsUnits];
    if (nk > 0) load_scales(0, sc);
    for (int j = 0; j < nk + kWsLag; ++j) {
      if (j < nk) {
        // Stage j % S was last read by step j - S's wgmma.
        if (j >= kWsStages) mbar_wait(empty0 + 8 * (j % kWsStages), ((j / kWsStages) - 1) & 1);
        issue(j);
      }
      mma::cp_commit();  // one group per iteration, empty or not, so the count below holds
      if (j >= kWsLag) {
        const int s = j - kWsLag;
        mma::cp_wait<kWsLag>();  // groups 0..s: step s's activations and raw weights are in
        decode(s, sc);
        fence_proxy_async();  // the copies and decode stores, visible to the tensor cores
        mbar_arrive(full0 + 8 * (s % kWsStages));
        if (s + 1 < nk) load_scales(s + 1, sc);  // after the fence, which need not wait for them
      }
    }
  } else {
    setmaxnreg_inc<kConsumerRegs>();
    const int c = (t - kWsProducers) >> 7, warp = (t >> 5) & 3, lane = t & 31;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    for (int s = 0; s < nk; ++s) {
      const int st = s % kWsStages;
      mbar_wait(full0 + 8 * st, (s / kWsStages) & 1);
      const uint32_t a_tile = sa + st * kATile + c * 64 * 128;
      const uint32_t b_tile = sb + st * kBTile;
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kBK / 16; ++ks) wgmma_m64n256k16(acc, desc(a_tile + ks * 32), desc(b_tile + ks * 32));
      wgmma_commit();
      wgmma_wait<1>();  // step s-1's wgmma are done: its stage goes back to the producer
      if (s > 0) mbar_arrive(empty0 + 8 * ((s - 1) % kWsStages));
    }
    wgmma_wait0();
#pragma unroll
    for (int i = 0; i < 128; ++i) fence_reg(acc[i]);
    wg_store<kMode>(p, job, n0, acc, c, warp, lane, mma_fp4::kScaleDown);
  }
}

}  // namespace
}  // namespace seatrt::cuda
