// The decode-shaped (skinny-M) NVFP4 kernel on the tensor cores: each weight
// word is read ONCE per token tile of up to 32 rows and applied to all of
// them with mma.sync m16n8k16 (BF16 in, fp32 accumulate).
//
// Work split.  A block owns one 16-row tile of the weight (two for a fused
// gate/up pair) and all tokens of its group; its warps split K (a "k-step"
// is 128 columns: lane (g, t) of a warp holds one 16-byte chunk -- 32 codes
// -- of rows g and g+8 at columns kb + 32t..+31), so even a 2 MB matrix
// spreads over ~1000 warps with every load of a warp issued at once.  The
// warps' partial sums meet in shared memory at the end.
//
// Fragment mapping.  An MMA only needs A and B to agree on which k each
// register slot holds.  Unpacking a 32-bit word of 8 codes naturally gives
// the pairs (i, i+4) (see unpack_pair), so the B fragments are built from
// the activations in the same pairing (prmt for BF16, a pack for F32).  MMA
// s (0..7) of a step uses word s/2, pairs 2(s%2) and 2(s%2)+1.
//
// Exactness.  A pair of codes becomes two BF16 values fp4 * 2^-126 with
// bit operations only (sign to bit 15, the 3 magnitude bits to the bottom of
// the exponent and the top of the mantissa; code 1 is the subnormal
// 2^-127), then one BF16 multiply by (group scale * 2^100): the product
// fp4 * scale * 2^-26 has at most 6 significant bits and is a normal BF16, so
// it is exact.  The MMA forms exact products in fp32 and accumulates in fp32;
// the epilogue multiplies by 2^26 / global divisor.  F32 activations are
// split into three BF16 terms (hi + mid + lo, 24 significant bits: the
// fp32 value exactly, barring underflow) fed as three MMAs into the same
// accumulator, so no input precision is lost.
#include "gemv.cuh"

namespace seatrt::cuda {
namespace {

constexpr int kKStep = 128;      // columns per warp step
constexpr int kMaxWarps = 8;     // warps splitting K in a block
constexpr float kScaleUp = 1.2676506002282294e30f;  // 2^100
constexpr float kScaleDown = 67108864.0f;             // 2^26

__device__ __forceinline__ uint32_t bf16x2_mul(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// Codes i and i+4 of word w as BF16 fp4 * 2^-126 (low half: code i).
template <int i>
__device__ __forceinline__ uint32_t unpack_pair(uint32_t w) {
  const uint32_t t = w << (12 - 4 * i);
  return (t & 0x80008000u) | ((t >> 6) & 0x01C001C0u);
}

__device__ __forceinline__ void mma_bf16(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The two group scales of a lane's 32 columns, times 2^100, as a BF16 pair
// each (same value in both halves).  Byte/halfword loads: no alignment
// assumption on the scale rows.
__device__ __forceinline__ void load_scales(const WeightRef& w, int64_t row, int64_t group, uint32_t* s) {
  float f0, f1;
  const int64_t i = row * w.scale_row_elems + group;
  if (w.kind == int32_t(WeightKind::Fp4E4m3Scales)) {
    const uint8_t* p = static_cast<const uint8_t*>(w.scales) + i;
    f0 = e4m3_to_float(__ldg(p));
    f1 = e4m3_to_float(__ldg(p + 1));
  } else {
    const __nv_bfloat16* p = static_cast<const __nv_bfloat16*>(w.scales) + i;
    f0 = __bfloat162float(p[0]);
    f1 = __bfloat162float(p[1]);
  }
  const __nv_bfloat162 a = __floats2bfloat162_rn(f0 * kScaleUp, f0 * kScaleUp);
  const __nv_bfloat162 b = __floats2bfloat162_rn(f1 * kScaleUp, f1 * kScaleUp);
  s[0] = *reinterpret_cast<const uint32_t*>(&a);
  s[1] = *reinterpret_cast<const uint32_t*>(&b);
}

// One lane's raw weight bytes of one step: rows g and g+8, and their scales.
struct StepLoad {
  uint4 q[2];
  uint32_t s[2][2];
};

__device__ __forceinline__ void load_step(const WeightRef& w, int64_t n0, int64_t n, int64_t k0, bool k_ok,
                                          int g, StepLoad& L) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t row = n0 + g + 8 * h;
    if (k_ok && row < n) {
      L.q[h] = __ldg(reinterpret_cast<const uint4*>(static_cast<const char*>(w.data) + row * w.data_row_bytes + k0 / 2));
      load_scales(w, row, k0 / 16, L.s[h]);
    } else {
      L.q[h] = make_uint4(0, 0, 0, 0);
      L.s[h][0] = L.s[h][1] = 0;
    }
  }
}

// The A fragments of the step's 8 MMAs: a[s][0..3] as mma.m16n8k16 wants
// them (row g low pair, row g+8 low pair, row g high pair, row g+8 high pair).
__device__ __forceinline__ void unpack_step(const StepLoad& L, uint32_t (*a)[4]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t words[4] = {L.q[h].x, L.q[h].y, L.q[h].z, L.q[h].w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t sc = L.s[h][j / 2];
      a[2 * j][h] = bf16x2_mul(unpack_pair<0>(words[j]), sc);
      a[2 * j][h + 2] = bf16x2_mul(unpack_pair<1>(words[j]), sc);
      a[2 * j + 1][h] = bf16x2_mul(unpack_pair<2>(words[j]), sc);
      a[2 * j + 1][h + 2] = bf16x2_mul(unpack_pair<3>(words[j]), sc);
    }
  }
}

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

__device__ __forceinline__ uint32_t pack_split(float& lo, float& hi) {
  const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
  lo -= __low2float(p);
  hi -= __high2float(p);
  return *reinterpret_cast<const uint32_t*>(&p);
}

template <bool kGlu>
struct Acc {
  float v[kGlu ? 2 : 1][4][4];  // [matrix][n-tile][fragment]
};

// acc[m][nt] += A[m] . B(x rows of n-tile nt) for one step.
template <int kNt, bool kGlu, bool kF32>
__device__ __forceinline__ void step_mma(const uint32_t (*a0)[4], const uint32_t (*a1)[4], const Mat& x,
                                         const int64_t* xrow, int ntv, int64_t k0, bool k_ok, Acc<kGlu>& acc) {
#pragma unroll
  for (int nt = 0; nt < kNt; ++nt) {
    if (nt >= ntv) break;
    const bool ok = k_ok && xrow[nt] >= 0;
    if (!kF32) {
      uint32_t b[8][2];
      load_b_bf16(static_cast<const __nv_bfloat16*>(x.data) + (ok ? xrow[nt] * x.row_stride + k0 : 0), ok, b);
#pragma unroll
      for (int s = 0; s < 8; ++s) {
        mma_bf16(acc.v[0][nt], a0[s], b[s]);
        if (kGlu) mma_bf16(acc.v[kGlu ? 1 : 0][nt], a1[s], b[s]);
      }
    } else {  // F32: three BF16 terms, each its own MMA into the same sum
      float f[32];
      const float* xr = static_cast<const float*>(x.data) + (ok ? xrow[nt] * x.row_stride + k0 : 0);
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
          mma_bf16(acc.v[0][nt], a0[s], b);
          if (kGlu) mma_bf16(acc.v[kGlu ? 1 : 0][nt], a1[s], b);
        }
      }
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
      const float xv = mat_load(a.x, xr, kk);
      s = fmaf(load_w1(w, row, kk), xv, s);
      if (a.glu) su = fmaf(load_w1(wu, row, kk), xv, su);
    }
    float v = s / w.global_divisor;
    if (a.glu) v = activation(a.act, v) * (su / wu.global_divisor);
    if (a.row_weight) v *= a.row_weight[asg];
    mat_store(a.out, asg, row, v);
  }
}

template <int kNt, bool kGlu, bool kF32>
__global__ void __launch_bounds__(kMaxWarps * 32, (!kGlu && !kF32 && kNt <= 2) ? 2 : 1) gemv_mma_kernel(GemvArgs a) {
  constexpr int kUnroll = kGlu ? 2 : 4;  // steps of loads in flight per lane
  constexpr int kMats = kGlu ? 2 : 1;
  extern __shared__ __align__(16) float red[];  // [warps][kMats][kNt][32][4]
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int warps = blockDim.x >> 5;
  const int64_t n0 = int64_t(blockIdx.x) * 16;
  const int64_t steps = (a.k + kKStep - 1) / kKStep;
  const int64_t per = (steps + warps - 1) / warps;
  const int64_t s_begin = warp * per, s_end = s_begin + per < steps ? s_begin + per : steps;

  int64_t count = a.groups.rows;
  const int32_t* list = nullptr;
  WeightRef w = a.w, wu = a.w_up;
  bool waited = false;
  if (a.groups.active) {
    // MoE: the expert of this slot comes from the grouping kernel.
    asm volatile("griddepcontrol.launch_dependents;");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    waited = true;
    if (int(blockIdx.y) >= *a.groups.num_active) return;
    const int e = a.groups.active[blockIdx.y];
    const int64_t first = a.groups.offsets[e];
    count = a.groups.offsets[e + 1] - first;
    list = a.groups.sorted + first;
    w = a.table[e];
    if (a.glu) wu = a.table_up[e];
    if (w.kind > int32_t(WeightKind::Fp4Bf16Scales) || (a.glu && wu.kind > int32_t(WeightKind::Fp4Bf16Scales))) {
      generic_rows(a, w, wu, n0, list, count);
      return;
    }
  }

  for (int64_t t0 = 0; t0 < count; t0 += 8 * kNt) {
    const int64_t left = count - t0;
    const int ntv = static_cast<int>(left >= 8 * kNt ? kNt : (left + 7) / 8);
    Acc<kGlu> acc;
#pragma unroll
    for (int m = 0; m < kMats; ++m)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc.v[m][nt][i] = 0.f;
    for (int64_t s0 = s_begin; s0 < s_end; s0 += kUnroll) {
      StepLoad L[kUnroll], Lu[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t k0 = (s0 + u) * kKStep + 32 * t;
        const bool k_ok = s0 + u < s_end && k0 < a.k;
        load_step(w, n0, a.n, k0, k_ok, g, L[u]);
        if (kGlu) load_step(wu, n0, a.n, k0, k_ok, g, Lu[u]);
      }
      if (!waited) {
        // Programmatic dependent launch: the weight loads above do not depend
        // on the previous kernel; the activations below do.
        asm volatile("griddepcontrol.launch_dependents;");
        asm volatile("griddepcontrol.wait;" ::: "memory");
        waited = true;
      }
      // Activation rows of the lane's token (column g of each n-tile).
      int64_t xrow[kNt];
#pragma unroll
      for (int nt = 0; nt < kNt; ++nt) {
        const int64_t m = t0 + 8 * nt + g;
        xrow[nt] = m < count ? (list ? list[m] : m) / a.x_div : -1;
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (s0 + u >= s_end) break;
        const int64_t k0 = (s0 + u) * kKStep + 32 * t;
        const bool k_ok = k0 < a.k;
        uint32_t a0[8][4], a1[8][4];
        unpack_step(L[u], a0);
        if (kGlu) unpack_step(Lu[u], a1);
        step_mma<kNt, kGlu, kF32>(a0, a1, a.x, xrow, ntv, k0, k_ok, acc);
      }
    }
    if (!waited) {
      asm volatile("griddepcontrol.launch_dependents;");
      asm volatile("griddepcontrol.wait;" ::: "memory");
      waited = true;
    }
    // Split-K partial sums meet in shared memory.
    __syncthreads();  // the previous token tile's readers are done
#pragma unroll
    for (int m = 0; m < kMats; ++m)
#pragma unroll
      for (int nt = 0; nt < kNt; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) red[(((warp * kMats + m) * kNt + nt) * 32 + lane) * 4 + i] = acc.v[m][nt][i];
    __syncthreads();
    for (int e = threadIdx.x; e < kNt * 128; e += blockDim.x) {
      const int nt = e / 128, ln = (e / 4) % 32, i = e % 4;
      const int64_t row = n0 + (ln >> 2) + 8 * (i >> 1);
      const int64_t m = t0 + 8 * nt + 2 * (ln & 3) + (i & 1);
      if (row >= a.n || m >= count) continue;
      float sum[kMats];
#pragma unroll
      for (int mm = 0; mm < kMats; ++mm) {
        sum[mm] = 0.f;
        for (int wi = 0; wi < warps; ++wi) sum[mm] += red[(((wi * kMats + mm) * kNt + nt) * 32 + ln) * 4 + i];
      }
      float v = sum[0] * kScaleDown / w.global_divisor;
      if (kGlu) v = activation(a.act, v) * (sum[kMats - 1] * kScaleDown / wu.global_divisor);
      const int32_t asg = list ? list[m] : static_cast<int32_t>(m);
      if (a.row_weight) v *= a.row_weight[asg];
      mat_store(a.out, asg, row, v);
    }
  }
  if (!waited) {  // no tokens: still release the dependents and order with them
    asm volatile("griddepcontrol.launch_dependents;");
    asm volatile("griddepcontrol.wait;" ::: "memory");
  }
}

template <int kNt, bool kGlu, bool kF32>
int launch_nt(cudaStream_t st, const GemvArgs& a, unsigned slots) {
  const int64_t steps = ceil_div(a.k, kKStep);
  // About two steps per warp: enough loads in flight, few idle warps.
  int warps = static_cast<int>(ceil_div(steps, 2));
  warps = warps < 1 ? 1 : warps > kMaxWarps ? kMaxWarps : warps;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(ceil_div(a.n, 16)), slots);
  cfg.blockDim = dim3(static_cast<unsigned>(warps * 32));
  cfg.dynamicSmemBytes = sizeof(float) * size_t(warps) * (kGlu ? 2 : 1) * kNt * 128;
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return static_cast<int>(cudaLaunchKernelEx(&cfg, gemv_mma_kernel<kNt, kGlu, kF32>, a));
}

template <bool kGlu, bool kF32>
int launch_glu(cudaStream_t st, const GemvArgs& a, unsigned slots, int64_t max_rows) {
  if (max_rows <= 8) return launch_nt<1, kGlu, kF32>(st, a, slots);
  if (max_rows <= 16) return launch_nt<2, kGlu, kF32>(st, a, slots);
  return launch_nt<4, kGlu, kF32>(st, a, slots);
}

}  // namespace

bool gemv_mma_fits(const GemvArgs& a) {
  const bool x_ok = a.x.dtype == SEATRT_DTYPE_BF16 || a.x.dtype == SEATRT_DTYPE_F32;
  return x_ok && a.vec && a.k % 32 == 0;
}

int launch_gemv_mma(cudaStream_t st, const GemvArgs& a, unsigned slots, int64_t max_rows) {
  if (a.x.dtype == SEATRT_DTYPE_F32)
    return a.glu ? launch_glu<true, true>(st, a, slots, max_rows) : launch_glu<false, true>(st, a, slots, max_rows);
  return a.glu ? launch_glu<true, false>(st, a, slots, max_rows) : launch_glu<false, false>(st, a, slots, max_rows);
}

}  // namespace seatrt::cuda
