// The second-generation prefill GEMM core (run 3 of NOTES-prefill.md):
// raw mma.sync m16n8k16 (BF16 in, fp32 accumulate) with ldmatrix, 64 x 64
// warp tiles and a cp.async pipeline.  It serves the same three modes as
// gemm_tc.cuh (plain linear, MoE gate/up GLU, MoE down times the router
// weight) through the same TcParams, for the common case only: every weight
// FP4 with 16-byte rows, x with 16-byte rows and K a multiple of 64.  The
// callers keep gemm_tc.cuh for everything else (ragged K, dense weights),
// and, after device run 3, by default (SEATRT_PREFILL_GEMM below).
//
// Why it is faster than gemm_tc.cuh (32 x 64 warp tiles, wmma, register
// prefetch): a 64 x 64 warp tile reads 4 KB of shared memory per 32 MMAs
// (the old tile: 3 KB per 16), the activation tiles and the raw FP4 bytes
// stream in with cp.async S steps ahead (no registers held for them), and
// the FP4 -> BF16 decode of the next step is interleaved with the MMAs of
// the current one instead of being a phase of its own.
//
// Block: WM x WN warps, tile (64 WM) x (64 WN), K steps of 64.
//  - plain linear: 4 x 2 warps (256 x 128), 4 stages, one block per SM;
//  - MoE: 2 x 2 warps (128 x 128: the grouping kernel's 128-row tiles),
//    3 stages, two blocks per SM.
// Shared memory per block: S stages of the activation tile (BM x 64 BF16,
// rows padded to 72 elements so ldmatrix rows fall in distinct banks) and of
// the raw weight bytes (BN x 32 bytes), plus two decoded BF16 weight tiles
// (BN x 72).  Iteration s (one barrier):
//   wait until step s+1's raw bytes are in; barrier;
//   for each 16-deep slice of step s: ldmatrix + MMAs, and a quarter of the
//     decode of step s+1 (raw -> BF16 tile (s+1)%2) and of the cp.async
//     issue of step s+S-1 (into the stage step s-1 used: free after the
//     barrier).
// The decode is exact (E2M1 * E4M3 has at most 6 significant bits, the
// 2^14 of unpack8 is folded into the scale), the global divisor is applied
// in fp32 in the epilogue, as in gemm_tc.cuh.
#pragma once

#include <cstdlib>
#include <cstring>

#include "gemm_tc.cuh"

namespace seatrt::cuda {

constexpr int kMmaBK = 64, kMmaLd = kMmaBK + 8;

// Whether gemm_mma can run a GEMM: the gemm_tc fast path's conditions with
// K a multiple of 64 (whole K steps: no partial step in the pipeline).
inline bool mma_fits(bool tc_fast_all, bool x_vec, bool w_vec, int64_t k) {
  return tc_fast_all && x_vec && w_vec && k % kMmaBK == 0 && k > 0;
}

namespace {

// Which core the prefill GEMMs take, from SEATRT_PREFILL_GEMM (read once):
//   unset or "wgmma": the linear on a wgmma core (since device run 4,
//       2026-11-30 22:12 UTC: the 30 layers' linears at 8k 253 TFLOP/s
//       against gemm_tc's 194; since run 6, 2026-12-02, on the 256 x 128
//       tile of gemm_wgmma_wide.cuh at 392; SEATRT_PREFILL_WGMMA picks
//       another wgmma kernel; NOTES-prefill.md), and the MoE's grouped
//       GEMMs on gemm_wgmma.cuh since run 5 (SEATRT_PREFILL_MOE=tc keeps the
//       MoE alone on gemm_tc.cuh: k_moe_grouped.cu's moe_core());
//   "tc":      gemm_tc.cuh for both;
//   "mma":     this core (linear 256 x 128, MoE 128 x 128);
//   "mma128":  this core, the linear on the 128 x 128 configuration;
//   "mma256n": this core, the linear on 128 x 256 (x rows x weight rows).
enum class MmaChoice { OldCore, Mma, Linear128, Linear256n, Wgmma };
inline MmaChoice mma_choice() {
  static const MmaChoice c = [] {
    const char* v = std::getenv("SEATRT_PREFILL_GEMM");
    if (!v || std::strcmp(v, "wgmma") == 0) return MmaChoice::Wgmma;
    if (std::strcmp(v, "mma") == 0) return MmaChoice::Mma;
    if (std::strcmp(v, "mma128") == 0) return MmaChoice::Linear128;
    if (std::strcmp(v, "mma256n") == 0) return MmaChoice::Linear256n;
    return MmaChoice::OldCore;
  }();
  return c;
}

namespace mma {

template <int WM, int WN, int S>
struct Cfg {
  static constexpr int kThreads = 32 * WM * WN, kBM = 64 * WM, kBN = 64 * WN, kStages = S;
  static constexpr int kAStage = kBM * kMmaLd * 2;  // bytes of one activation stage
  static constexpr int kRStage = kBN * 32;           // bytes of one raw FP4 stage
  static constexpr int kBTile = kBN * kMmaLd * 2;    // bytes of one decoded weight tile
  static constexpr int kSmem = S * (kAStage + kRStage) + 2 * kBTile;
  static constexpr int kUnits = 2 * kBN / kThreads;  // 32-weight decode units per thread
  static constexpr int kACopies = kBM * 8 / kThreads;  // 16-byte activation copies per thread and step
  static_assert(kUnits >= 1 && 2 * kBN % kThreads == 0, "decode units must divide evenly");
  static_assert(kACopies % 4 == 0, "activation copies are issued a quarter per 16-deep slice");
  static_assert(S >= 3, "the decode reads stage s+1 while stage s-1 is refilled");
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1; `valid` false writes 16 zeros
// (src-size 0: nothing is read).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t* r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void mma16816(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two consecutive outputs (already scaled) of one row: one 8- or 4-byte
// store where dtype and alignment allow, else element by element.
__device__ __forceinline__ void store2(const Mat& o, int64_t n, int64_t row, int64_t col, float v0, float v1) {
  if (col >= n) return;
  const int64_t at = row * o.row_stride + col;
  if (col + 1 < n && (at & 1) == 0) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(o.data);
    if (o.dtype == SEATRT_DTYPE_F32 && base % 8 == 0) {
      *reinterpret_cast<float2*>(static_cast<float*>(o.data) + at) = make_float2(v0, v1);
      return;
    }
    if (o.dtype == SEATRT_DTYPE_BF16 && base % 4 == 0) {
      *reinterpret_cast<__nv_bfloat162*>(static_cast<__nv_bfloat16*>(o.data) + at) = __floats2bfloat162_rn(v0, v1);
      return;
    }
  }
  mat_store(o, row, col, v0);
  if (col + 1 < n) mat_store(o, row, col + 1, v1);
}

// Two group scales (raw: an E4M3 pair in the low 16 bits, or a BF16 pair)
// to floats times 2^14 (unpack8's codes are fp4 * 2^-14).
__device__ __forceinline__ void scale_pair(uint32_t raw, bool e4m3, float& s0, float& s1) {
  if (e4m3) {
    s0 = e4m3_to_float(static_cast<uint8_t>(raw & 0xffu)) * 16384.0f;
    s1 = e4m3_to_float(static_cast<uint8_t>((raw >> 8) & 0xffu)) * 16384.0f;
  } else {
    s0 = __uint_as_float(raw << 16) * 16384.0f;
    s1 = __uint_as_float(raw & 0xffff0000u) * 16384.0f;
  }
}

}  // namespace mma

// kGlu: MoE gate/up (the tile's weight rows are BN/2 gate rows then the same
// BN/2 up rows; a warp's n8 tiles 0-3 are gate and 4-7 the up rows of the
// same 32 outputs, so act(gate) * up is formed in registers).
template <int WM, int WN, int S, bool kGlu>
__global__ void __launch_bounds__(32 * WM * WN, (WM * WN <= 4 ? 2 : 1)) gemm_mma_kernel(TcParams p) {
  using C = mma::Cfg<WM, WN, S>;
  constexpr int kThreads = C::kThreads, kBM = C::kBM, kBN = C::kBN, kU = C::kUnits;
  extern __shared__ __align__(128) unsigned char mma_dyn[];
  __shared__ const __nv_bfloat16* arows[kBM];
  const uint32_t sa = mma::smem_addr(mma_dyn);            // S activation stages
  unsigned char* const sr = mma_dyn + S * C::kAStage;     // S raw weight stages
  unsigned char* const sb = sr + S * C::kRStage;          // 2 decoded weight tiles
  const uint32_t sb_addr = mma::smem_addr(sb);

  // The block's job (as tc_job, with this kernel's row-tile height).
  TcJob job;
  if (p.mode == TcMode::Linear) {
    job.w = p.w;
    job.m0 = int64_t(blockIdx.y) * kBM;
    const int64_t left = p.x.rows - job.m0;
    if (left <= 0) return;
    job.rows = static_cast<int32_t>(left < kBM ? left : kBM);
  } else {
    if (int(blockIdx.y) >= *p.num_tiles) return;
    const TcTile tile = p.tiles[blockIdx.y];
    job.w = p.table[tile.expert];
    if (kGlu) job.w_up = p.table_up[tile.expert];
    job.m0 = tile.first;
    job.rows = tile.rows;
  }
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  const int wm = warp % WM, wn = warp / WM;
  // First output column of the block (GLU: BN/2 outputs, each a gate and an up row).
  const int64_t n0 = int64_t(blockIdx.x) * (kGlu ? kBN / 2 : kBN);
  for (int r = t; r < kBM; r += kThreads) arows[r] = tc_a_row(p, job, r);

  // This thread's decode units: unit u = t + v * kThreads is weight tile row
  // u / 2, columns (u % 2) * 32 .. +31 of each K step; the thread also
  // copies that unit's 16 raw bytes, so it decodes only what it copied.
  const unsigned char* uq[kU];  // raw FP4 row of the unit (column 0)
  const char* us[kU];           // scale row of the unit
  bool uok[kU], ue4m3[kU];
#pragma unroll
  for (int v = 0; v < kU; ++v) {
    const int u = t + v * kThreads, br = u >> 1;
    const bool up = kGlu && br >= kBN / 2;
    const WeightRef& w = up ? job.w_up : job.w;
    const int64_t row = n0 + (kGlu ? br % (kBN / 2) : br);
    uok[v] = row < p.n;
    ue4m3[v] = w.kind == int32_t(WeightKind::Fp4E4m3Scales);
    const int64_t rr = uok[v] ? row : 0;
    uq[v] = static_cast<const unsigned char*>(w.data) + rr * w.data_row_bytes + (u & 1) * 16;
    us[v] = static_cast<const char*>(w.scales) + rr * w.scale_row_elems * (ue4m3[v] ? 1 : 2);
  }
  __syncthreads();  // arows

  const int nk = static_cast<int>(p.k / kMmaBK);
  const int a_ch = t & 7;  // this thread's 16-byte column chunk of the activation rows
  // Quarter `part` of step `step`'s copies (activations; the raw weight
  // bytes with part 0) into its stage.
  auto issue = [&](int step, int part) {
    const int slot = step % S;
    const int64_t k0 = int64_t(step) * kMmaBK;
#pragma unroll
    for (int i = part * (C::kACopies / 4); i < (part + 1) * (C::kACopies / 4); ++i) {
      const int r = (t >> 3) + i * (kThreads / 8);
      const __nv_bfloat16* src = arows[r];
      mma::cp_async16(sa + slot * C::kAStage + (r * kMmaLd + a_ch * 8) * 2, src ? src + k0 + a_ch * 8 : p.x.data,
                      src != nullptr);
    }
    if (part == 0) {
#pragma unroll
      for (int v = 0; v < kU; ++v)
        mma::cp_async16(mma::smem_addr(sr + slot * C::kRStage + (t + v * kThreads) * 16), uq[v] + k0 / 2, uok[v]);
    }
  };
  // The raw scale pairs of step `step` for this thread's units.
  auto load_scales = [&](int step, uint32_t* sc) {
#pragma unroll
    for (int v = 0; v < kU; ++v) {
      const int64_t g = int64_t(step) * 4 + ((t + v * kThreads) & 1) * 2;  // first group of the unit
      if (!uok[v])
        sc[v] = 0u;
      else if (ue4m3[v])
        sc[v] = __ldg(reinterpret_cast<const unsigned short*>(us[v] + g));
      else
        sc[v] = __ldg(reinterpret_cast<const unsigned int*>(us[v] + 2 * g));
    }
  };

  float acc[4][8][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  // ldmatrix addresses (bytes, relative to a stage / tile).  A: rows
  // wm*64 + i*16 + (lane % 16), columns (lane / 16) * 8.  B: n8 tiles 2pp and
  // 2pp+1 of the warp = 16 consecutive tile rows starting at b_row(pp); lanes
  // 0-7 / 8-15 / 16-23 / 24-31 address rows 0-7 k 0-7 / rows 0-7 k 8-15 /
  // rows 8-15 k 0-7 / rows 8-15 k 8-15 (b0 b1 of tile 2pp, b0 b1 of 2pp+1).
  const uint32_t a_off = ((wm * 64 + (lane & 15)) * kMmaLd + (lane >> 4) * 8) * 2;
  uint32_t b_off[4];
#pragma unroll
  for (int pp = 0; pp < 4; ++pp) {
    const int b_row = kGlu ? (pp < 2 ? wn * 32 + pp * 16 : kBN / 2 + wn * 32 + (pp - 2) * 16) : wn * 64 + pp * 16;
    b_off[pp] = ((b_row + (lane & 7) + (lane >> 4) * 8) * kMmaLd + ((lane >> 3) & 1) * 8) * 2;
  }

  // Decode of one quarter (8 columns) of each unit of step `step`: raw word
  // `part` (codes part*8 .. +7 of the unit's 32) to 8 BF16 values.
  uint4 q[kU];
  float s0[kU], s1[kU];
  auto decode_begin = [&](int step, const uint32_t* sc) {
#pragma unroll
    for (int v = 0; v < kU; ++v) {
      q[v] = *reinterpret_cast<const uint4*>(sr + (step % S) * C::kRStage + (t + v * kThreads) * 16);
      mma::scale_pair(sc[v], ue4m3[v], s0[v], s1[v]);
    }
  };
  auto decode_part = [&](int step, int part) {
#pragma unroll
    for (int v = 0; v < kU; ++v) {
      const int u = t + v * kThreads;
      const uint32_t word = part == 0 ? q[v].x : part == 1 ? q[v].y : part == 2 ? q[v].z : q[v].w;
      uint32_t out[4];
      tc::decode8(word, part < 2 ? s0[v] : s1[v], out);
      unsigned char* dst = sb + (step & 1) * C::kBTile + ((u >> 1) * kMmaLd + (u & 1) * 32 + part * 8) * 2;
      *reinterpret_cast<uint4*>(dst) = make_uint4(out[0], out[1], out[2], out[3]);
    }
  };

  // Prologue: steps 0 .. S-2 in flight, step 0 decoded.
#pragma unroll
  for (int st = 0; st < S - 1; ++st) {
    if (st < nk)
#pragma unroll
      for (int part = 0; part < 4; ++part) issue(st, part);
    mma::cp_commit();
  }
  uint32_t sc[kU];
  load_scales(0, sc);
  mma::cp_wait<S - 2>();  // step 0's copies of this thread (the decode reads only those)
  decode_begin(0, sc);
#pragma unroll
  for (int part = 0; part < 4; ++part) decode_part(0, part);
  if (nk > 1) load_scales(1, sc);

  for (int s = 0; s < nk; ++s) {
    // Committed: steps 0 .. s+S-2.  Step s+1 must be in: S-3 may pend.
    mma::cp_wait<S - 3>();
    __syncthreads();  // step s's activations and decoded weights visible; step s-1's buffers free
    const bool next = s + 1 < nk, refill = s + S - 1 < nk;
    if (next) decode_begin(s + 1, sc);
    const uint32_t a_s = sa + (s % S) * C::kAStage, b_s = sb_addr + (s & 1) * C::kBTile;
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      uint32_t af[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i) mma::ldsm_x4(a_s + a_off + i * 16 * kMmaLd * 2 + ks * 32, af[i]);
#pragma unroll
      for (int pp = 0; pp < 4; ++pp) {
        uint32_t bf[4];
        mma::ldsm_x4(b_s + b_off[pp] + ks * 32, bf);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          mma::mma16816(acc[i][2 * pp], af[i], bf);
          mma::mma16816(acc[i][2 * pp + 1], af[i], bf + 2);
        }
      }
      if (refill) issue(s + S - 1, ks);
      if (next) decode_part(s + 1, ks);
    }
    mma::cp_commit();  // possibly empty: keeps the group count uniform
    if (s + 2 < nk) load_scales(s + 2, sc);
  }
  mma::cp_wait<0>();

  // Epilogue straight from the accumulators: lane (g, tq) holds rows g and
  // g+8 of each 16-row slice, columns 2tq and 2tq+1 of each n8 tile.
  const int g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = wm * 64 + i * 16 + g + hh * 8;
      if (r >= job.rows) continue;
      int64_t row = job.m0 + r;
      float scale = 1.0f;
      if (p.mode == TcMode::MoeDown) {
        row = p.sorted[row];
        scale = p.row_weight[row];
      }
      if (kGlu) {
        const float gdiv = job.w.global_divisor, udiv = job.w_up.global_divisor;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float* ga = &acc[i][j][hh * 2];
          const float* ua = &acc[i][j + 4][hh * 2];
          const float v0 = activation(p.act, ga[0] / gdiv) * (ua[0] / udiv);
          const float v1 = activation(p.act, ga[1] / gdiv) * (ua[1] / udiv);
          mma::store2(p.out, p.n, row, n0 + wn * 32 + j * 8 + 2 * tq, v0, v1);
        }
      } else {
        const float div = job.w.global_divisor;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float* a = &acc[i][j][hh * 2];
          mma::store2(p.out, p.n, row, n0 + wn * 64 + j * 8 + 2 * tq, a[0] / div * scale, a[1] / div * scale);
        }
      }
    }
  }
}

// Launches gemm_mma_kernel with its dynamic shared memory (the opt-in above
// 48 KiB is set once per instantiation and file: internal linkage).
template <int WM, int WN, int S, bool kGlu>
int launch_gemm_mma(cudaStream_t st, dim3 grid, const TcParams& p) {
  constexpr int kSmem = mma::Cfg<WM, WN, S>::kSmem;
  static bool opted_in = false;
  if (!opted_in) {
    if (cudaError_t e = cudaFuncSetAttribute(gemm_mma_kernel<WM, WN, S, kGlu>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem))
      return static_cast<int>(e);
    // All of the unified L1/shared memory as shared memory, so that the MoE
    // configuration's two blocks fit on one SM (the copies bypass L1).
    if (cudaError_t e = cudaFuncSetAttribute(gemm_mma_kernel<WM, WN, S, kGlu>,
                                             cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared))
      return static_cast<int>(e);
    opted_in = true;
  }
  gemm_mma_kernel<WM, WN, S, kGlu><<<grid, mma::Cfg<WM, WN, S>::kThreads, kSmem, st>>>(p);
  return last_error();
}

// The configurations the callers use.
constexpr int kMmaLinWM = 4, kMmaLinWN = 2, kMmaLinStages = 4;  // 256 x 128, one block per SM
constexpr int kMmaMoeWM = 2, kMmaMoeWN = 2, kMmaMoeStages = 3;  // 128 x 128, two blocks per SM
constexpr int kMmaWideWM = 2, kMmaWideWN = 4, kMmaWideStages = 4;  // 128 x 256, one block per SM
static_assert(64 * kMmaMoeWM == kTcBM, "MoE row tiles are the grouping kernel's 128 rows");
static_assert(64 * kMmaMoeWN == kTcBN, "the MoE grids are sized with gemm_tc's tile width");

}  // namespace

}  // namespace seatrt::cuda
