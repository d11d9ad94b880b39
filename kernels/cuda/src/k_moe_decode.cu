// The MoE decode path (T * top_k <= 512 assignments, NVFP4 experts): two
// launches per layer instead of four.
//
//  1. gate/up: grid (row blocks, expert slot).  Each block finds its expert
//     itself -- slot y is the y-th expert (ascending id) that any assignment
//     uses, from the <= 512 router ids in shared memory -- so no grouping
//     kernel sits on the critical path, and the dependent loads before the
//     first weight byte are one (the ids): the expert tables are copied to
//     shared memory before the PDL wait.  Warps own 16 gate AND up rows and
//     `split` warps share a tile's K (more for few experts, to spread the
//     bytes over the SMs); h = act(gate) * up goes out as two BF16 planes.
//  2. down: grid (64/128-row chunks, expert slot); a warp owns 16 rows over
//     the whole K = 704 (six steps, all loads issued at once, no cross-warp
//     reduction); rows scaled by the router weight go to one fp32 row per
//     assignment.  The last block to finish a chunk (a per-chunk arrival
//     counter, zeroed by launch 1) sums each token's k rows of that chunk in
//     slot order into `out`: deterministic, no third launch.
//
// Activations are staged once per block in shared memory, already as the
// MMA's B fragments (pairs (i, i+4), see mma_fp4.cuh) and, for F32 x, already
// split into BF16 terms (two, hi + lo, or with "p3" three, exact: see
// MoeDecodeChoice::f32_planes), so the inner loop is: unpack the
// weight chunk, 4 shared loads per plane, MMAs.  Each lane keeps a ring of
// kRing steps of weight loads in flight across the gate -> up boundary.
#include "mma_fp4.cuh"
#include "pdl.cuh"

namespace seatrt::cuda {
namespace {

using namespace mma_fp4;

constexpr int kMaxAssign = 512;   // T * top_k the decode path takes
constexpr int kMaxExperts = 256;  // experts per layer it takes
constexpr int kGluWarps = 8;      // warps of a gate/up block
constexpr size_t kSmemBudget = 110 * 1024;  // dynamic shared memory per block: two blocks per SM

struct DecodeArgs {
  const int32_t* ids = nullptr;
  int32_t assignments = 0, top_k = 0, num_experts = 0;
  const WeightRef* table = nullptr;     // gate (launch 1) or down (launch 2)
  const WeightRef* table_up = nullptr;  // launch 1
  int64_t n = 0, k = 0;                 // the weight's rows and K
  Mat x;                                // launch 1: tokens; launch 2: h hi plane [A, I]
  int64_t x_lo_offset = 0;              // launch 2: the h lo plane, elements after hi
  int32_t x_div = 1;                    // x row = assignment / x_div
  int32_t act = 0;
  int32_t split = 1;        // warps sharing one 16-row tile's K
  int32_t tile_tokens = 8;  // tokens staged per pass (one MMA n-tile)
  int32_t table_bytes = 0;  // > 0: the whole expert tables are copied to shared memory before the PDL wait
  int32_t tok_stride = 0;   // staged 32-bit words per token
  int32_t stage_offset = 0; // load mode 2: byte offset of the warps' stage buffers
  __nv_bfloat16* h = nullptr;  // launch 1 output: [A, I] hi plane, lo plane h_lo_offset later
  int64_t h_lo_offset = 0;
  float* y = nullptr;              // launch 2: [A, H] per-assignment rows
  const float* route_w = nullptr;  // launch 2: router weight per assignment
  int32_t* counters = nullptr;     // per down chunk; zeroed by launch 1
  int32_t chunks = 0;
  int32_t early = 0;  // MoeDecodeChoice::down_early (pdl_begin)
  // Launch 1: the down tables, whose weights each block asks L2 for
  // (MoeDecodeChoice::l2_down); NULL: none.
  const WeightRef* l2_down = nullptr;
  Mat out;  // launch 2: [T, H]
};

// Programmatic dependent launch.  By default both launches release their
// successor, then wait for the kernels before them.  With `early`
// (MoeDecodeChoice::down_early, opt-in until measured on a device), launch 1
// (gate/up) waits first and only then releases launch 2, so launch 2 knows
// the router's ids are final and reads them, its expert's table entry and
// its first weight steps before its own wait, behind launch 1's work: the
// down's dependent chain ids -> table -> first weight bytes is ~3-4 us of
// every MoE layer's critical path at batch 1 (CUPTI timeline, 2026-12-05).
// Launch 2 writes nothing global before that wait.
template <bool kGlu>
__device__ __forceinline__ void pdl_begin(bool early) {
  if (early) {
    if (kGlu) asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;");
  } else {
    asm volatile("griddepcontrol.launch_dependents;");
    asm volatile("griddepcontrol.wait;" ::: "memory");
  }
}
// Asks L2 for the bytes [begin, end), rounded inward to 16 bytes, in pieces
// of at most 32 KB, one piece per lane of the calling warp per round.  A
// hint: nothing waits for it.
__device__ __forceinline__ void prefetch_l2(const char* begin, const char* end, int lane) {
  constexpr uintptr_t kPiece = 32 * 1024;
  const uintptr_t b = (reinterpret_cast<uintptr_t>(begin) + 15) & ~uintptr_t(15);
  const uintptr_t e = reinterpret_cast<uintptr_t>(end) & ~uintptr_t(15);
  for (uintptr_t p = b + uintptr_t(lane) * kPiece; p < e; p += 32 * kPiece) {
    const uint32_t n = static_cast<uint32_t>(e - p < kPiece ? e - p : kPiece);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(n) : "memory");
  }
}

// Launch 2's wait where it needs launch 1's output (returns at once when
// already waited; no flag is kept: the tight down kernel spilled one).
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// One lane's weight bytes of one step (rows g and g+8, see mma_fp4.cuh) with
// the group scales kept raw (two E4M3 bytes or two BF16 per row) and
// converted when the step is consumed: two registers per step fewer than
// StepLoad, which pays for the ring's depth.
struct RawStep {
  uint4 q[2];
  uint32_t s[2];
};

// Weight loads in program order too (volatile asm, like the MMAs): the
// ring already puts them kRing steps ahead; hoisting them further only
// costs registers.
__device__ __forceinline__ uint4 ldg128(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// One load instruction for a lane's two group scales of a row: 16 bits (two
// E4M3) or 32 bits (two BF16), zero-extended, used only when the step is
// consumed.  Needs the scale rows 4-byte aligned with an even element count
// (scales_aligned).
__device__ __forceinline__ uint32_t ldg_u16(const void* p) {
  uint32_t v;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ uint32_t ldg_u32(const void* p) {
  uint32_t v;
  asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
__device__ __forceinline__ bool scales_aligned(const WeightRef& w) {
  return reinterpret_cast<uintptr_t>(w.scales) % 4 == 0 && w.scale_row_elems % 2 == 0;
}

// kWide false (version 4 as measured): two byte (or half) loads per row,
// combined at once -- the combine waits for the loads, so every refill of
// the ring stalls a full memory latency (seen in the SASS: the PRMT after
// the scale LDGs waits on their scoreboard).  kWide: one load, no combine.
template <bool kWide>
__device__ __forceinline__ void load_raw(const WeightRef& w, int64_t n0, int64_t n, int64_t k0, bool k_ok, int g,
                                         RawStep& L) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t row = n0 + g + 8 * h;
    if (k_ok && row < n) {
      L.q[h] = ldg128(static_cast<const char*>(w.data) + row * w.data_row_bytes + k0 / 2);
      const int64_t i = row * w.scale_row_elems + k0 / 16;
      if (kWide) {
        L.s[h] = w.kind == int32_t(WeightKind::Fp4E4m3Scales)
                     ? ldg_u16(static_cast<const uint8_t*>(w.scales) + i)
                     : ldg_u32(static_cast<const unsigned short*>(w.scales) + i);
      } else if (w.kind == int32_t(WeightKind::Fp4E4m3Scales)) {
        const uint8_t* p = static_cast<const uint8_t*>(w.scales) + i;
        L.s[h] = uint32_t(__ldg(p)) | (uint32_t(__ldg(p + 1)) << 8);
      } else {
        const unsigned short* p = static_cast<const unsigned short*>(w.scales) + i;
        L.s[h] = uint32_t(__ldg(p)) | (uint32_t(__ldg(p + 1)) << 16);
      }
    } else {
      L.q[h] = make_uint4(0, 0, 0, 0);
      L.s[h] = 0;
    }
  }
}

// Load mode 2: weights through shared memory with cp.async, kStages steps in
// flight per warp.  cp.async.wait_group completes groups in order, so a
// step waits only for its own bytes (the register ring of modes 0/1 keeps
// every load on one scoreboard: consuming any step waits for all of them,
// seen in the SASS).  Each lane copies and later reads only its own bytes
// (its two 16-byte code chunks and the aligned 4-byte word holding its two
// group scales per row), so no barrier between lanes is needed.
constexpr int kStages = 4;
constexpr int kStageBytes = 2 * 32 * 16 + 2 * 32 * 4;  // per warp: codes [2][32] x 16 B, scales [2][32] x 4 B

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp_async4(unsigned dst, const void* src, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(ok ? 4 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ uint32_t lds32(unsigned addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}
// Scale rows 4-byte aligned as load mode 2 copies them.
__device__ __forceinline__ bool scales_aligned4(const WeightRef& w) {
  return reinterpret_cast<uintptr_t>(w.scales) % 4 == 0 &&
         w.scale_row_elems % (w.kind == int32_t(WeightKind::Fp4E4m3Scales) ? 4 : 2) == 0;
}

// Load mode 2's source addresses for one lane: its two rows (g, g+8) of
// the matrix being streamed, advanced one k-step per issued step, so that
// an issue is four cp.async and no arithmetic on the WeightRef (rebuilding
// the addresses from it at every step took ~100 of the ~410 instructions of
// a gate/up step in the SASS, 2026-12-01, the kernel being issue-bound).
struct AsyncStream {
  const char* code[2];
  const char* scale[2];
  const char* safe;    // any valid address, for zero-filling copies
  int64_t k0;          // the lane's first column of the next step
  int32_t scale_step;  // scale bytes per k-step: 8 (E4M3) or 16 (BF16)
  bool row_ok[2];
};

__device__ __forceinline__ void stream_begin(AsyncStream& s, const WeightRef& w, int64_t n0, int64_t n, int64_t k0,
                                             int g) {
  const bool e4m3 = w.kind == int32_t(WeightKind::Fp4E4m3Scales);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t row = n0 + g + 8 * h;
    s.row_ok[h] = row < n;
    const int64_t r = row < n ? row : 0;
    s.code[h] = static_cast<const char*>(w.data) + r * w.data_row_bytes + k0 / 2;
    // The aligned 4-byte word holding the lane's two group scales (its
    // first group, k0 / 16, is even).
    s.scale[h] = static_cast<const char*>(w.scales) +
                 (e4m3 ? r * w.scale_row_elems + ((k0 / 16) & ~int64_t(3)) : 2 * (r * w.scale_row_elems + k0 / 16));
  }
  s.safe = static_cast<const char*>(w.data);
  s.k0 = k0;
  s.scale_step = e4m3 ? kKStep / 16 : 2 * (kKStep / 16);
}

// Copies the stream's next step into stage buffer `buf` (shared address of
// this warp's stage) and commits it as one group; rows past n or columns
// past `k` are zero-filled (never stale: a stale NaN scale times a zero
// activation would still poison the sum).  `live` false (past the warp's
// stream, never read): an empty group, which keeps the count that
// cp.async.wait_group relies on.
__device__ __forceinline__ void stream_issue(AsyncStream& s, int64_t k, bool live, int lane, unsigned buf) {
  if (live) {
    const bool k_ok = s.k0 < k;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const bool in = k_ok && s.row_ok[h];
      cp_async16(buf + unsigned((h * 32 + lane) * 16), in ? s.code[h] : s.safe, in);
      cp_async4(buf + unsigned(2 * 32 * 16 + (h * 32 + lane) * 4), in ? s.scale[h] : s.safe, in);
      s.code[h] += kKStep / 2;
      s.scale[h] += s.scale_step;
    }
    s.k0 += kKStep;
  }
  cp_async_commit();
}

// The step in stage buffer `buf` as a RawStep (scales as load_raw gives them).
__device__ __forceinline__ void read_stage(unsigned buf, int32_t kind, int t, int lane, RawStep& L) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    L.q[h] = lds128(buf + unsigned((h * 32 + lane) * 16));
    const uint32_t word = lds32(buf + unsigned(2 * 32 * 16 + (h * 32 + lane) * 4));
    L.s[h] = kind == int32_t(WeightKind::Fp4E4m3Scales) ? (word >> (16 * (t & 1))) & 0xFFFFu : word;
  }
}

// acc += A(L) . B over one step; `xc` is the shared address of the lane's
// token's staged chunk (16 words per plane, planes `plane_bytes` apart;
// staged in whole steps, zeros past K, see staged_chunks).  The A fragments
// are mma_fp4's (unpack_pair, times the group scale * 2^100, exact).  The
// step's MMAs alternate between two accumulators (summed once per pass), so
// each is a chain of half the step's HMMAs: one chain of 16 made "wait"
// (fixed-latency dependency) the largest stall under ncu (2026-12-01).
template <int kPlanes>
__device__ __forceinline__ void step_staged(const RawStep& L, int32_t kind, unsigned xc, unsigned plane_bytes,
                                            float (*acc)[4]) {
  uint32_t sc[2][2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int grp = 0; grp < 2; ++grp) {
      const float f = kind == int32_t(WeightKind::Fp4E4m3Scales)
                          ? e4m3_to_float(static_cast<uint8_t>(L.s[h] >> (8 * grp)))
                          : __uint_as_float(((L.s[h] >> (16 * grp)) & 0xFFFFu) << 16);
      const __nv_bfloat162 v = __floats2bfloat162_rn(f * kScaleUp, f * kScaleUp);
      sc[h][grp] = *reinterpret_cast<const uint32_t*>(&v);
    }
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint4 b[kPlanes];
#pragma unroll
    for (int p = 0; p < kPlanes; ++p) b[p] = lds128(xc + unsigned(p) * plane_bytes + 16u * unsigned(j));
    const uint32_t w0 = j == 0 ? L.q[0].x : j == 1 ? L.q[0].y : j == 2 ? L.q[0].z : L.q[0].w;
    const uint32_t w1 = j == 0 ? L.q[1].x : j == 1 ? L.q[1].y : j == 2 ? L.q[1].z : L.q[1].w;
    const uint32_t s0 = sc[0][j / 2], s1 = sc[1][j / 2];
    // MMA 2j: pairs 0 and 1 of word j; MMA 2j + 1: pairs 2 and 3.
    uint32_t a[4] = {bf16x2_mul(unpack_pair<0>(w0), s0), bf16x2_mul(unpack_pair<0>(w1), s1),
                     bf16x2_mul(unpack_pair<1>(w0), s0), bf16x2_mul(unpack_pair<1>(w1), s1)};
#pragma unroll
    for (int p = 0; p < kPlanes; ++p) {
      const uint32_t bb[2] = {b[p].x, b[p].y};
      mma_bf16(acc[p & 1], a, bb);
    }
    a[0] = bf16x2_mul(unpack_pair<2>(w0), s0);
    a[1] = bf16x2_mul(unpack_pair<2>(w1), s1);
    a[2] = bf16x2_mul(unpack_pair<3>(w0), s0);
    a[3] = bf16x2_mul(unpack_pair<3>(w1), s1);
#pragma unroll
    for (int p = 0; p < kPlanes; ++p) {
      const uint32_t bb[2] = {b[p].z, b[p].w};
      mma_bf16(acc[(p + 1) & 1], a, bb);
    }
  }
}

// 32-column chunks staged per plane: K rounded up to whole steps (the
// down's K = 704 is 5.5 steps), the tail zero, so a step reads its B
// fragments with no bounds check.
__host__ __device__ inline int staged_chunks(int64_t k) { return static_cast<int>((k + kKStep - 1) / kKStep) * (kKStep / 32); }

// Stages the activation rows of `valid` assignments (list[0..valid)) as B
// fragments (mma_fp4::stage_b_fragments).  Gate/up with more than one plane
// splits F32 x; the down reads h's BF16 planes.
template <bool kGlu, int kPlanes>
__device__ void stage_rows(const DecodeArgs& a, const int32_t* list, int valid, uint32_t* xs) {
  stage_b_fragments<kPlanes, (kGlu && kPlanes > 1)>(a.x, a.x_lo_offset, a.k, staged_chunks(a.k), valid, a.tok_stride,
                                                  [&](int m) { return int64_t(list[m] / a.x_div); }, xs);
}

__device__ __forceinline__ void store_h(const DecodeArgs& a, int32_t asg, int64_t row, float v) {
  __nv_bfloat16* o = a.h + int64_t(asg) * a.n + row;
  const __nv_bfloat16 hi = __float2bfloat16_rn(v);
  o[0] = hi;
  o[a.h_lo_offset] = __float2bfloat16_rn(v - __bfloat162float(hi));
}

// Experts that are not NVFP4 (never the model's): one output per thread,
// plain loops over K, correct and slow.
template <bool kGlu>
__device__ void generic_rows(const DecodeArgs& a, const WeightRef& w, const WeightRef& wu, int64_t r0, int64_t r1,
                             const int32_t* list, int count) {
  const int64_t rows = r1 - r0;
  for (int64_t i = threadIdx.x; i < rows * count; i += blockDim.x) {
    const int64_t row = r0 + i % rows;
    const int32_t asg = list[i / rows];
    const int64_t xr = asg / a.x_div;
    float s = 0.f, su = 0.f;
    for (int64_t kk = 0; kk < a.k; ++kk) {
      float xv = mat_load(a.x, xr, kk);
      if (a.x_lo_offset)
        xv += __bfloat162float(static_cast<const __nv_bfloat16*>(a.x.data)[a.x_lo_offset + xr * a.x.row_stride + kk]);
      s = fmaf(load_w1(w, row, kk), xv, s);
      if (kGlu) su = fmaf(load_w1(wu, row, kk), xv, su);
    }
    if (kGlu) store_h(a, asg, row, activation(a.act, s / w.global_divisor) * (su / wu.global_divisor));
    else a.y[int64_t(asg) * a.n + row] = s / w.global_divisor * a.route_w[asg];
  }
}

// out[t, r] = sum over slots j of y[t*k + j, r] (valid ids, slot order) for
// the rows [r0, r1); zeros when no id is valid.
__device__ void sum_chunk(const DecodeArgs& a, const int32_t* ids, int64_t r0, int64_t r1, bool zeros) {
  const int64_t rows = r1 - r0, tokens = a.out.rows;
  for (int64_t i = threadIdx.x; i < tokens * rows; i += blockDim.x) {
    const int64_t t = i / rows, r = r0 + i % rows;
    float s = 0.f;
    if (!zeros) {
#pragma unroll 4
      for (int j = 0; j < a.top_k; ++j) {
        const int e = ids[t * a.top_k + j];
        if (e >= 0 && e < a.num_experts) s += __ldcg(a.y + (t * a.top_k + j) * a.n + r);
      }
    }
    mat_store(a.out, t, r, s);
  }
}

// kGlu: launch 1 (gate/up, h out); else launch 2 (down, y and the sum).
// kPlanes: BF16 planes of the staged activations (gate/up: 1 for BF16 x; F32
// x split into 3, exact, or 2, see MoeDecodeChoice::f32_planes).
// kLoad: 0 the register ring with byte-wise scale loads (version 4 as
// measured), 1 the ring with one scale load per row, 2 cp.async stages.
// kTight (down blocks, more than 4 tokens): at most 80 registers so that six
// 128-thread blocks fit an SM.  The down kernel is latency-bound (each block
// streams only 6 steps per warp; ncu, 2026-12-01: 24% occupancy, 19% of
// DRAM bandwidth at 16 tokens), so more resident blocks is more bytes in
// flight; at <= 4 tokens (one wave) the spills it costs made the batch-1
// step 3% slower, so there the bound stays at 128.
template <bool kGlu, int kPlanes, int kRing, int kLoad, bool kTight = false>
__global__ void __launch_bounds__(256, kTight ? 3 : 2) moe_decode_kernel(DecodeArgs a) {
  constexpr bool kWide = kLoad == 1;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int32_t s_ids[kMaxAssign];
  __shared__ int32_t s_list[kMaxAssign];
  __shared__ uint32_t s_mask[kMaxExperts / 32];
  __shared__ int s_info[3];  // expert, its assignment count, experts in use
  __shared__ WeightRef s_w[2];  // this block's expert: gate (or down), up
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int E = a.num_experts, A = a.assignments;
  const WeightRef* s_table = reinterpret_cast<const WeightRef*>(smem);  // when a.table_bytes > 0
  uint32_t* xs = reinterpret_cast<uint32_t*>(smem + a.table_bytes);
  float* red = reinterpret_cast<float*>(xs + a.tile_tokens * a.tok_stride);

  constexpr int kWords = sizeof(WeightRef) / 8;
  static_assert(sizeof(WeightRef) % 8 == 0, "WeightRef copies as 8-byte words");
  if (a.table_bytes > 0) {
    // Few tokens (one wave of blocks): the whole tables before the PDL wait,
    // which overlaps the previous kernel, so no L2 round trip for this
    // block's entries after the ids.
    uint2* dst = reinterpret_cast<uint2*>(smem);
    for (int i = tid; i < E * kWords; i += blockDim.x) {
      dst[i] = __ldg(reinterpret_cast<const uint2*>(a.table) + i);
      if (kGlu) dst[E * kWords + i] = __ldg(reinterpret_cast<const uint2*>(a.table_up) + i);
    }
  }
  for (int i = tid; i < kMaxExperts / 32; i += blockDim.x) s_mask[i] = 0;
  pdl_begin<kGlu>(a.early != 0);
  // The mask must be zero before any thread sets a bit: without this barrier
  // a warp past its table copy set bits that warp 0 then cleared (lost
  // experts at 16+ tokens, where the ids reach warps 1..7; at <= 4 tokens
  // all ids sit in warp 0, in program order with its clearing).
  __syncthreads();
  if (kGlu && blockIdx.x == 0 && blockIdx.y == 0)
    for (int i = tid; i < a.chunks; i += blockDim.x) a.counters[i] = 0;  // launch 2 counts arrivals
  for (int i = tid; i < A; i += blockDim.x) {
    // Launch 2 may read before its wait (early): from L2 (ld.global.cg),
    // never a line of an earlier layer's ids left in this SM's L1.
    const int e = kGlu ? a.ids[i] : __ldcg(a.ids + i);
    s_ids[i] = e;
    if (e >= 0 && e < E) atomicOr(&s_mask[e >> 5], 1u << (e & 31));
  }
  __syncthreads();
  if (warp == 0) {
    // Slot y -> the y-th expert in use, ascending ids.
    const uint32_t m = lane < kMaxExperts / 32 ? s_mask[lane] : 0u;
    const int c = __popc(m);
    int incl = c;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int v = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl += v;
    }
    const int y = static_cast<int>(blockIdx.y);
    if (y >= incl - c && y < incl) {
      uint32_t mm = m;
      for (int r = y - (incl - c); r > 0; --r) mm &= mm - 1;
      s_info[0] = lane * 32 + __ffs(static_cast<int>(mm)) - 1;
    }
    if (lane == 31) s_info[2] = incl;
  }
  __syncthreads();
  const int active = s_info[2];
  const int rows_per_block = 16 * static_cast<int>(blockDim.x / 32) / a.split;
  const int64_t r0 = int64_t(blockIdx.x) * rows_per_block;
  const int64_t r1 = r0 + rows_per_block < a.n ? r0 + rows_per_block : a.n;
  if (static_cast<int>(blockIdx.y) >= active) {
    if (!kGlu && active == 0 && blockIdx.y == 0) {
      pdl_wait();
      sum_chunk(a, s_ids, r0, r1, true);
    }
    return;
  }
  const int e = s_info[0];
  if (warp == 1 && lane < (kGlu ? 2 : 1) * kWords) {
    // Warp 1 copies this expert's table entries beside warp 0's list: from
    // the shared copy, or else from global memory (one L2 round trip; with
    // many tokens the whole tables would cost 5-10 KB of shared memory and
    // their copy time in every block of the later waves).
    const WeightRef* src = a.table_bytes > 0 ? s_table + (lane < kWords ? e : E + e)
                                             : lane < kWords ? a.table + e : a.table_up + e;
    reinterpret_cast<uint2*>(s_w)[lane] = reinterpret_cast<const uint2*>(src)[lane % kWords];
  }
  if (warp == 0) {
    // This expert's assignments, in assignment order.
    int n = 0;
    for (int base = 0; base < A; base += 32) {
      const int i = base + lane;
      const bool hit = i < A && s_ids[i] == e;
      const uint32_t b = __ballot_sync(0xffffffffu, hit);
      if (hit) s_list[n + __popc(b & ((1u << lane) - 1u))] = i;
      n += __popc(b);
    }
    if (lane == 0) s_info[1] = n;
  }
  __syncthreads();
  if (kGlu && a.l2_down && warp == 2) {
    // This block's share of its expert's down rows (the down's rows are the
    // gate/up K), data and scales.
    const WeightRef d = a.l2_down[e];
    const int64_t per = (a.k + gridDim.x - 1) / gridDim.x, r0 = int64_t(blockIdx.x) * per;
    const int64_t r1 = r0 + per < a.k ? r0 + per : a.k;
    if (r1 > r0 && d.kind <= int32_t(WeightKind::Fp4Bf16Scales)) {
      const char* data = static_cast<const char*>(d.data);
      prefetch_l2(data + r0 * d.data_row_bytes, data + r1 * d.data_row_bytes, lane);
      const int64_t esize = d.kind == int32_t(WeightKind::Fp4E4m3Scales) ? 1 : 2;
      const char* scales = static_cast<const char*>(d.scales);
      prefetch_l2(scales + r0 * d.scale_row_elems * esize, scales + r1 * d.scale_row_elems * esize, lane);
    }
  }
  const int count = s_info[1];
  const WeightRef& w = s_w[0];
  const WeightRef& wu = s_w[kGlu ? 1 : 0];
  const int32_t kind = w.kind;
  const bool fp4 = kind <= int32_t(WeightKind::Fp4Bf16Scales) && wu.kind == kind &&
                   (!kWide || (scales_aligned(w) && scales_aligned(wu))) &&
                   (kLoad != 2 || (scales_aligned4(w) && scales_aligned4(wu)));

  if (!fp4) {
    if (!kGlu) pdl_wait();
    generic_rows<kGlu>(a, w, wu, r0, r1, s_list, count);
  } else {
    // The warp's tile and its share of K.
    const int64_t n0 = r0 + 16 * (warp / a.split);
    const int slice = warp % a.split;
    const int steps = static_cast<int>((a.k + kKStep - 1) / kKStep);
    const int per = (steps + a.split - 1) / a.split;
    const int s_begin = slice * per;
    const int ns = s_begin >= steps ? 0 : (s_begin + per < steps ? per : steps - s_begin);
    const int total = (kGlu ? 2 : 1) * ns;
    const unsigned plane_bytes = 64u * unsigned(staged_chunks(a.k));
    // Step u of the warp's stream: gate steps, then up steps.
    // (The WeightRef is read from shared memory at each issue: holding both
    // in registers, or selecting between them, costs registers or a stack
    // frame.)
    auto issue = [&](int u, RawStep& L) {
      const bool second = kGlu && u >= ns;
      const int64_t k0 = int64_t(s_begin + (second ? u - ns : u)) * kKStep + 32 * t;
      load_raw<kWide>(s_w[second ? 1 : 0], n0, a.n, k0, u < total && k0 < a.k, g, L);
    };
    // Load mode 2: step u of the stream into stage u % kStages of this warp.
    const unsigned stage0 = static_cast<unsigned>(__cvta_generic_to_shared(smem)) + unsigned(a.stage_offset) +
                            unsigned(warp * kStages * kStageBytes);
    // Step u is issued in order (u = 0, 1, ...): the gate stream, then at
    // u == ns the up stream from the warp's first column again.
    const int64_t k_first = int64_t(s_begin) * kKStep + 32 * t;
    AsyncStream stream;
    auto issue_stage = [&](int u) {
      if (u == 0) stream_begin(stream, s_w[0], n0, a.n, k_first, g);
      if (kGlu && u == ns) stream_begin(stream, s_w[1], n0, a.n, k_first, g);
      stream_issue(stream, a.k, u < total, lane, stage0 + unsigned((u % kStages) * kStageBytes));
    };
    for (int t0 = 0; t0 < count; t0 += a.tile_tokens) {
      const int valid = count - t0 < a.tile_tokens ? count - t0 : a.tile_tokens;
      RawStep L[kLoad == 2 ? 1 : kRing];
      if constexpr (kLoad == 2) {
#pragma unroll
        for (int r = 0; r < kStages - 1; ++r) issue_stage(r);
      } else {
#pragma unroll
        for (int r = 0; r < kRing; ++r) issue(r, L[r]);
      }
      if (!kGlu && t0 == 0) pdl_wait();  // launch 2, early: h is launch 1's (the first weight steps are in flight)
      __syncthreads();  // the previous pass's readers of xs and red are done
      stage_rows<kGlu, kPlanes>(a, s_list + t0, valid, xs);
      __syncthreads();
      float acc2[2][4] = {}, acc2_g[2][4] = {};  // two chains each (step_staged)
      // Lanes of tokens past the tile read token 0's row: their B fragments
      // feed only their own output columns, which are never stored, and
      // the loads need no predicate (nor the zeroing it costs).
      const int gx = g < valid ? g : 0;
      const unsigned xt = static_cast<unsigned>(__cvta_generic_to_shared(xs)) + 4u * unsigned(gx * a.tok_stride);
      if constexpr (kLoad == 2) {
        // Step u (the s-th of its matrix) into `sum`; the gate steps and
        // the up steps are two loops, so no step selects its accumulator.
        auto step = [&](int u, int s, float (*sum)[4]) {
          issue_stage(u + kStages - 1);
          cp_async_wait<kStages - 1>();  // step u's group has landed
          read_stage(stage0 + unsigned((u % kStages) * kStageBytes), kind, t, lane, L[0]);
          step_staged<kPlanes>(L[0], kind, xt + 64u * unsigned(4 * (s_begin + s) + t), plane_bytes, sum);
        };
#pragma unroll 1
        for (int u = 0; u < ns; ++u) step(u, u, kGlu ? acc2_g : acc2);
        if (kGlu) {
#pragma unroll 1
          for (int u = ns; u < total; ++u) step(u, u - ns, acc2);
        }
        cp_async_wait<0>();  // the empty tail groups: nothing outstanding across passes
      }
      for (int u0 = 0; kLoad != 2 && u0 < total; u0 += kRing) {
#pragma unroll
        for (int r = 0; r < kRing; ++r) {
          const int u = u0 + r;
          if (u >= total) break;
          const int64_t k0 = int64_t(s_begin + (kGlu && u >= ns ? u - ns : u)) * kKStep + 32 * t;
          step_staged<kPlanes>(L[r], kind, xt + 64u * unsigned(k0 / 32), plane_bytes, acc2);
          if (kGlu && u == ns - 1) {
#pragma unroll
            for (int c = 0; c < 2; ++c)
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                acc2_g[c][i] = acc2[c][i];
                acc2[c][i] = 0.f;
              }
          }
          if (u + kRing < total) issue(u + kRing, L[r]);
        }
      }
      float acc[4], acc_g[4];  // the two chains summed
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        acc[i] = acc2[0][i] + acc2[1][i];
        acc_g[i] = acc2_g[0][i] + acc2_g[1][i];
      }
      // Lane (g, t) holds rows n0 + g (+8 for i >= 2), tokens 2t (+1 for odd i).
      if (a.split == 1) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int64_t row = n0 + g + 8 * (i >> 1);
          const int m = 2 * t + (i & 1);
          if (row >= r1 || m >= valid) continue;
          const int32_t asg = s_list[t0 + m];
          if (kGlu) {
            store_h(a, asg, row,
                    activation(a.act, acc_g[i] * kScaleDown / w.global_divisor) * (acc[i] * kScaleDown / wu.global_divisor));
          } else {
            a.y[int64_t(asg) * a.n + row] = acc[i] * kScaleDown / w.global_divisor * a.route_w[asg];
          }
        }
      } else {
        // Split K (gate/up only): partial sums meet in shared memory, summed
        // in slice order.
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          red[(warp * 32 + lane) * 8 + i] = acc_g[i];
          red[(warp * 32 + lane) * 8 + 4 + i] = acc[i];
        }
        __syncthreads();
        const int tiles = static_cast<int>(blockDim.x / 32) / a.split;
        for (int o = tid; o < tiles * 128; o += blockDim.x) {
          const int tl = o / 128, ln = (o / 4) % 32, i = o % 4;
          const int64_t row = r0 + 16 * tl + (ln >> 2) + 8 * (i >> 1);
          const int m = 2 * (ln & 3) + (i & 1);
          if (row >= r1 || m >= valid) continue;
          float sg = 0.f, su = 0.f;
          for (int sl = 0; sl < a.split; ++sl) {
            sg += red[((tl * a.split + sl) * 32 + ln) * 8 + i];
            su += red[((tl * a.split + sl) * 32 + ln) * 8 + 4 + i];
          }
          store_h(a, s_list[t0 + m], row,
                  activation(a.act, sg * kScaleDown / w.global_divisor) * (su * kScaleDown / wu.global_divisor));
        }
      }
    }
  }
  if (kGlu) return;

  // Launch 2: the last block of this chunk (over all experts in use) sums it
  // (the grid-barrier pattern: stores, fence, barrier, one arrival).
  pdl_wait();  // the counters are zeroed by launch 1 (no-op after the one above)
  __threadfence();
  __syncthreads();
  if (tid == 0) {
    __threadfence();
    s_info[0] = atomicAdd(&a.counters[blockIdx.x], 1) == active - 1;
  }
  __syncthreads();
  if (s_info[0]) {
    __threadfence();
    sum_chunk(a, s_ids, r0, r1, false);
    if (tid == 0) a.counters[blockIdx.x] = 0;
  }
}

// Steps of weight loads in flight per lane (the most that fits 128
// registers without spilling, -Xptxas -v): gate/up warps have 6-44 steps,
// down warps 6 (K = 704).
constexpr int kGluRing = 4;
constexpr int kGluRingF32 = 3;
constexpr int kDownRing = 4;

size_t align256(size_t b) { return (b + 255) / 256 * 256; }
size_t align16(size_t b) { return (b + 15) / 16 * 16; }

struct Carved {
  __nv_bfloat16* h;
  float* y;
  int32_t* counters;
};

Carved carve(const MoeProblem& p, void* base) {
  const size_t A = static_cast<size_t>(p.tokens * p.top_k);
  char* c = static_cast<char*>(base);
  Carved w{};
  w.h = reinterpret_cast<__nv_bfloat16*>(c);
  c += align256(2 * sizeof(__nv_bfloat16) * A * size_t(p.intermediate));
  w.y = reinterpret_cast<float*>(c);
  c += align256(sizeof(float) * A * size_t(p.hidden));
  w.counters = reinterpret_cast<int32_t*>(c);
  return w;
}

template <bool kGlu, int kPlanes, int kRing>
int launch_one(cudaStream_t st, DecodeArgs a, dim3 grid, unsigned threads, int load, bool tight = false) {
  size_t smem = size_t(a.table_bytes) + sizeof(uint32_t) * size_t(a.tile_tokens) * size_t(a.tok_stride) +
                (kGlu && a.split > 1 ? sizeof(float) * 8 * threads : 0);
  smem = (smem + 15) / 16 * 16;
  a.stage_offset = static_cast<int32_t>(smem);
  if (load == 2) smem += size_t(threads / 32) * kStages * kStageBytes;
  auto kernel = load == 2   ? (tight ? moe_decode_kernel<kGlu, kPlanes, kRing, 2, !kGlu> : moe_decode_kernel<kGlu, kPlanes, kRing, 2>)
                : load == 1 ? moe_decode_kernel<kGlu, kPlanes, kRing, 1>
                            : moe_decode_kernel<kGlu, kPlanes, kRing, 0>;
  // Always: the kernel's ~4 KB of static shared memory counts against the
  // 48 KB a launch gets without the opt-in, so a dynamic size just under 48
  // KB (BF16 x, 8 staged tokens, split 1: 47.6 KB) was refused with
  // cudaErrorInvalidValue when this was asked only above 48 KB.
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)))
    return static_cast<int>(e);
  return static_cast<int>(launch_pdl(kernel, grid, dim3(threads), smem, st, a));
}

}  // namespace

size_t moe_decode_workspace_bytes(const MoeProblem& p) {
  const size_t A = static_cast<size_t>(p.tokens * p.top_k);
  return align256(2 * sizeof(__nv_bfloat16) * A * size_t(p.intermediate)) + align256(sizeof(float) * A * size_t(p.hidden)) +
         align256(sizeof(int32_t) * size_t(ceil_div(p.hidden, 64)));
}

bool moe_decode_fits(const MoeProblem& p) {
  const bool x_ok = (p.x.dtype == SEATRT_DTYPE_F32 || p.x.dtype == SEATRT_DTYPE_BF16) &&
                    reinterpret_cast<uintptr_t>(p.x.data) % 16 == 0 &&
                    (p.x.row_stride * (p.x.dtype == SEATRT_DTYPE_F32 ? 4 : 2)) % 16 == 0;
  // One token's staged rows must fit the shared-memory budget.
  const size_t one = sizeof(uint32_t) * size_t(staged_token_words(3, 32 * int64_t(staged_chunks(p.hidden > p.intermediate ? p.hidden : p.intermediate))));
  return p.vec && x_ok && p.hidden % 32 == 0 && p.intermediate % 32 == 0 && p.tokens * p.top_k <= kMaxAssign &&
         p.num_experts <= kMaxExperts &&
         one + 8 * 1024 + (p.tokens <= 4 ? 2 * size_t(p.num_experts) * sizeof(WeightRef) : 0) + size_t(kGluWarps) * kStages * kStageBytes <= kSmemBudget;
}

int launch_moe_decode(cudaStream_t st, const MoeProblem& p, void* workspace, const MoeDecodeChoice& choice) {
  const Carved ws = carve(p, workspace);
  const int64_t A = p.tokens * p.top_k;
  const unsigned slots = static_cast<unsigned>(A < p.num_experts ? A : p.num_experts);
  const bool f32 = p.x.dtype == SEATRT_DTYPE_F32;
  // Defaults from the version-4 sweep (NOTES-decode.md): 8-warp down blocks
  // from 17 tokens on (-3% at 32), else 4.
  const int down_warps =
      choice.down_warps == 4 || choice.down_warps == 8 ? choice.down_warps : (p.tokens > 16 ? 8 : 4);
  const int64_t chunk_rows = 16 * down_warps;

  DecodeArgs g;
  g.ids = p.ids;
  g.assignments = static_cast<int32_t>(A);
  g.top_k = p.top_k;
  g.num_experts = p.num_experts;
  g.table = p.gate;
  g.table_up = p.up;
  g.n = p.intermediate;
  g.k = p.hidden;
  g.x = p.x;
  g.x_div = p.top_k;
  g.act = p.activation;
  // Warps per 16-row tile: more when few experts are in use, so that the
  // bytes spread over the SMs.  Best per batch in the 2026-12-01 sweep (op
  // benchmark, graph replay, F32 x as the model passes): cp.async stages 4
  // up to 4 tokens, then 2 (at 16 tokens s2 7.61 ms against s1 8.13); the
  // register ring (version-4 sweep) 4 up to 4, 2 up to 8, 1 up to 16, then 2.
  int split = choice.split;
  if (split != 1 && split != 2 && split != 4 && split != 8)
    split = p.tokens <= 4                                 ? 4
            : choice.async_loads || p.tokens <= 8 || p.tokens > 16 ? 2
                                                                   : 1;
  g.split = split;
  const int planes = f32 ? (choice.f32_planes == 2 ? 2 : 3) : 1;
  g.tok_stride = staged_token_words(planes, 32 * int64_t(staged_chunks(p.hidden)));
  // Up to 4 tokens every block is in the first wave: the tables' copy
  // overlaps the previous kernel (PDL) and saves an L2 round trip per block
  // (batch-1 step 5.18 -> 5.01 ms, 2026-12-01).
  const bool copy_tables = p.tokens <= 4;
  g.table_bytes = copy_tables ? static_cast<int32_t>(align16(2 * size_t(p.num_experts) * sizeof(WeightRef))) : 0;
  g.h = ws.h;
  g.h_lo_offset = A * p.intermediate;
  g.counters = ws.counters;
  g.chunks = static_cast<int32_t>(ceil_div(p.hidden, chunk_rows));
  g.early = choice.down_early ? 1 : 0;
  g.l2_down = choice.l2_down && p.tokens <= 2 ? p.down : nullptr;
  const int load = choice.async_loads ? 2 : choice.wide_scales ? 1 : 0;
  const size_t stages = load == 2 ? size_t(kGluWarps) * kStages * kStageBytes : 0;
  const size_t red = (split > 1 ? sizeof(float) * 8 * 32 * kGluWarps : 0) + stages + 16;
  int tile = static_cast<int>(p.tokens < 8 ? p.tokens : 8);
  if (choice.max_tile >= 1 && tile > choice.max_tile) tile = choice.max_tile;
  if (planes == 3 && tile > 4) tile = 4;  // three planes: 17 KB per token at H 2816
  while (tile > 1 && size_t(g.table_bytes) + red + sizeof(uint32_t) * size_t(tile) * size_t(g.tok_stride) > kSmemBudget) --tile;
  g.tile_tokens = tile;
  const dim3 grid_g(static_cast<unsigned>(ceil_div(p.intermediate, 16 * kGluWarps / split)), slots);
  const int e1 = planes == 3   ? launch_one<true, 3, kGluRingF32>(st, g, grid_g, 32 * kGluWarps, load)
                 : planes == 2 ? launch_one<true, 2, kGluRingF32>(st, g, grid_g, 32 * kGluWarps, load)
                               : launch_one<true, 1, kGluRing>(st, g, grid_g, 32 * kGluWarps, load);
  if (e1) return e1;

  DecodeArgs d;
  d.ids = p.ids;
  d.assignments = static_cast<int32_t>(A);
  d.top_k = p.top_k;
  d.num_experts = p.num_experts;
  d.table = p.down;
  d.n = p.hidden;
  d.k = p.intermediate;
  d.x = Mat{ws.h, SEATRT_DTYPE_BF16, A, p.intermediate, p.intermediate};
  d.x_lo_offset = A * p.intermediate;
  d.x_div = 1;
  d.split = 1;
  d.tok_stride = staged_token_words(2, 32 * int64_t(staged_chunks(p.intermediate)));
  d.table_bytes = copy_tables ? static_cast<int32_t>(align16(size_t(p.num_experts) * sizeof(WeightRef))) : 0;
  // At most 4 staged tokens (11 KB of h planes at I = 704): with 4 stages
  // of 4 warps that keeps a 128-thread down block at ~32 KB, six per SM (an
  // expert sees 1.6 tokens at batch 16, 2.3 at 32 under uniform routing;
  // more take another pass over its weights, from L2).
  int down_tile = static_cast<int>(p.tokens < 4 ? p.tokens : 4);
  const size_t down_stages = load == 2 ? size_t(down_warps) * kStages * kStageBytes + 16 : 0;
  while (down_tile > 1 &&
         size_t(d.table_bytes) + down_stages + sizeof(uint32_t) * size_t(down_tile) * size_t(d.tok_stride) > kSmemBudget)
    --down_tile;
  d.tile_tokens = down_tile;
  d.y = ws.y;
  d.route_w = p.weights;
  d.counters = ws.counters;
  d.chunks = g.chunks;
  d.early = g.early;
  d.out = p.out;
  const dim3 grid_d(static_cast<unsigned>(g.chunks), slots);
  return launch_one<false, 2, kDownRing>(st, d, grid_d, static_cast<unsigned>(32 * down_warps), load, p.tokens > 4);
}

}  // namespace seatrt::cuda
