// One weight tile (R rows x K, already in shared memory) times up to 32
// activation rows on mma.sync m16n8k16 (weights = A, tokens = B), as the
// provider's skinny kernels do: lane (g, t) takes the 32 columns kb + 32t of
// rows g and g + 8; E2M1 codes i and i+4 of a word become one BF16 pair (an
// exact bit move giving fp4 * 2^-126) times the group scale * 2^100, so the
// k order inside an MMA is (0,4),(1,5),.. and the activations are permuted
// the same way.  Warps split (16-row groups x K steps); partial sums meet in
// shared memory (out_s[row * os + token]).
#pragma once
#include "sync.cuh"

namespace pk {

constexpr int kRgc = 3;          // 16-row groups per warp unit
constexpr int kOutStride = 33;   // floats per output row in out_s (unstaged)
constexpr int kScratchBytes = 32768;
// Few rows (<= 4): the activation rows are staged once per instruction in
// shared memory (cp.async, after out_s), so the warps' K steps read them
// there instead of paying an L2 round trip per step; out_s then keeps 5
// floats per row so both fit the scratch area.
__device__ __forceinline__ bool x_staged(int cnt, int K, int R) {
  return cnt <= 4 && R * 5 * 4 + cnt * K * 2 + 16 <= kScratchBytes;
}
__device__ __forceinline__ int out_stride(int cnt, int K, int R) { return x_staged(cnt, K, R) ? 5 : kOutStride; }
constexpr float kUp = 1.2676506002282294e30f;  // 2^100
constexpr float kDown = 67108864.0f;            // 2^26

template <int i>
__device__ __forceinline__ uint32_t fp4_pair(uint32_t w) {
  const uint32_t t = w << (12 - 4 * i);
  return (t & 0x80008000u) | ((t >> 6) & 0x01C001C0u);
}
__device__ __forceinline__ uint32_t bmul2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ void mma16816(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ uint4 lds128(const void* p) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(smem_addr(p)));
  return v;
}
__device__ __forceinline__ uint32_t scale_pair(uint8_t b) {
  const float f = e4m3f(b) * kUp;
  const __nv_bfloat162 v = __floats2bfloat162_rn(f, f);
  return *reinterpret_cast<const uint32_t*>(&v);
}
// 8 BF16 (one 16-byte chunk) as the pairs (0,4),(1,5),(2,6),(3,7).
__device__ __forceinline__ void perm8(const uint4& u, uint32_t* o) {
  o[0] = __byte_perm(u.x, u.z, 0x5410);
  o[1] = __byte_perm(u.x, u.z, 0x7632);
  o[2] = __byte_perm(u.y, u.w, 0x5410);
  o[3] = __byte_perm(u.y, u.w, 0x7632);
}

struct XSrc {  // activation rows (bf16, written this step: read through L2)
  const __nv_bfloat16* x;
  int stride;
  const int* gather;  // row of token j = gather[j] >> 3 (q_tok entries), or j
  int cnt;
};

template <int NTG>
__device__ __forceinline__ void load_b(const XSrc& xs, const uint8_t* xst, int K, int nt0, int chunk, bool ok, int g,
                                       uint32_t (&b)[NTG][8][2]) {
#pragma unroll
  for (int n = 0; n < NTG; ++n) {
    const int j = (nt0 + n) * 8 + g;
    if (ok && j < xs.cnt) {
      const int row = xst ? 0 : xs.gather ? (__ldcg(xs.gather + j) >> 3) : j;
      const __nv_bfloat16* p = xs.x + size_t(row) * xs.stride + chunk * 32;
      const uint8_t* q = xst + (size_t(j) * K + chunk * 32) * 2;
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        uint32_t o[4];
        perm8(xst ? lds128(q + 16 * w) : ldcg4(p + 8 * w), o);
        b[n][2 * w][0] = o[0];
        b[n][2 * w][1] = o[1];
        b[n][2 * w + 1][0] = o[2];
        b[n][2 * w + 1][1] = o[3];
      }
    } else {
#pragma unroll
      for (int s = 0; s < 8; ++s) b[n][s][0] = b[n][s][1] = 0u;
    }
  }
}

// A fragments of the 8 MMAs of one K step for rows row0+g, row0+g+8.
template <bool kBf16>
__device__ __forceinline__ void load_a(const uint8_t* d, const uint8_t* s, int K, int row0, int kb, int t, int g, bool ok,
                                       uint32_t (&a)[8][4]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row0 + g + 8 * h;
    if (!ok) {
#pragma unroll
      for (int i = 0; i < 8; ++i) a[i][h] = a[i][h + 2] = 0u;
    } else if constexpr (kBf16) {
      const uint8_t* p = d + size_t(r) * K * 2 + (kb + 32 * t) * 2;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        uint32_t o[4];
        perm8(lds128(p + 16 * j), o);
        a[2 * j][h] = o[0];
        a[2 * j][h + 2] = o[1];
        a[2 * j + 1][h] = o[2];
        a[2 * j + 1][h + 2] = o[3];
      }
    } else {
      const uint4 q = lds128(d + size_t(r) * (K / 2) + kb / 2 + 16 * t);
      const uint8_t* sp = s + size_t(r) * (K / 16) + (kb + 32 * t) / 16;
      const uint32_t s0 = scale_pair(sp[0]), s1 = scale_pair(sp[1]);
      const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint32_t sc = j < 2 ? s0 : s1;
        a[2 * j][h] = bmul2(fp4_pair<0>(w[j]), sc);
        a[2 * j][h + 2] = bmul2(fp4_pair<1>(w[j]), sc);
        a[2 * j + 1][h] = bmul2(fp4_pair<2>(w[j]), sc);
        a[2 * j + 1][h + 2] = bmul2(fp4_pair<3>(w[j]), sc);
      }
    }
  }
}

template <bool kBf16, int NTG>
__device__ void tile_mma_n(const uint8_t* d, const uint8_t* s, int R, int K, const XSrc& xs, float* out_s, int os,
                           const uint8_t* xst) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int nks = (K + 127) / 128, nrg = R / 16, nrgc = (nrg + kRgc - 1) / kRgc;
  const int nt = (xs.cnt + 7) / 8, nntg = (nt + NTG - 1) / NTG;
  const int units = nrgc * nntg * nks;
  const int u0 = warp * units / 8, u1 = (warp + 1) * units / 8;
  float acc[kRgc][NTG][4];
  int cur = -1;
  auto flush = [&](int key) {
    if (key < 0) return;
    const int rgc = key / nntg, ntg = key % nntg;
#pragma unroll
    for (int r = 0; r < kRgc; ++r) {
      const int rg = rgc * kRgc + r;
      if (rg >= nrg) break;
#pragma unroll
      for (int n = 0; n < NTG; ++n) {
        const int row = rg * 16 + g, tok = (ntg * NTG + n) * 8 + 2 * t;
        if (tok >= xs.cnt) continue;
        atomicAdd(out_s + row * os + tok, acc[r][n][0]);
        atomicAdd(out_s + row * os + tok + 1, acc[r][n][1]);
        atomicAdd(out_s + (row + 8) * os + tok, acc[r][n][2]);
        atomicAdd(out_s + (row + 8) * os + tok + 1, acc[r][n][3]);
      }
    }
  };
  for (int u = u0; u < u1; ++u) {
    const int key = u / nks, ks = u % nks;
    if (key != cur) {
      flush(cur);
      cur = key;
#pragma unroll
      for (int r = 0; r < kRgc; ++r)
#pragma unroll
        for (int n = 0; n < NTG; ++n) acc[r][n][0] = acc[r][n][1] = acc[r][n][2] = acc[r][n][3] = 0.f;
    }
    const int rgc = key / nntg, ntg = key % nntg;
    const int kb = ks * 128, chunk = kb / 32 + t;
    const bool ok = chunk < K / 32;
    uint32_t b[NTG][8][2];
    load_b<NTG>(xs, xst, K, ntg * NTG, chunk, ok, g, b);
#pragma unroll
    for (int r = 0; r < kRgc; ++r) {
      const int rg = rgc * kRgc + r;
      if (rg >= nrg) break;
      uint32_t a[8][4];
      load_a<kBf16>(d, s, K, rg * 16, kb, t, g, ok, a);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int n = 0; n < NTG; ++n) mma16816(acc[r][n], a[i], b[n][i]);
    }
  }
  flush(cur);
}

// All threads: the cnt activation rows (gathered) to xst, 16 bytes per
// cp.async (L2 only: they were written by other blocks this step).
__device__ void stage_x(const XSrc& xs, int K, uint8_t* xst) {
  const int per_row = K / 8;
  for (int i = threadIdx.x; i < xs.cnt * per_row; i += blockDim.x) {
    const int j = i / per_row, c = i % per_row;
    const int row = xs.gather ? (__ldcg(xs.gather + j) >> 3) : j;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(xst + (size_t(j) * K + c * 8) * 2)),
                 "l"(xs.x + size_t(row) * xs.stride + c * 8)
                 : "memory");
  }
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
}

// Zeroes out_s (R rows of out_stride floats), stages the activations when
// few, multiplies; a barrier follows.  Returns the out_s row stride.
template <bool kBf16>
__device__ int tile_mma(const uint8_t* d, const uint8_t* s, int R, int K, const XSrc& xs, float* out_s) {
  const bool st = x_staged(xs.cnt, K, R);
  const int os = st ? 5 : kOutStride;
  uint8_t* xst = st ? reinterpret_cast<uint8_t*>(out_s) + ((R * os * 4 + 15) & ~15) : nullptr;
  for (int i = threadIdx.x; i < R * os; i += blockDim.x) out_s[i] = 0.f;
  if (st) stage_x(xs, K, xst);
  __syncthreads();
  if (xs.cnt <= 8) tile_mma_n<kBf16, 1>(d, s, R, K, xs, out_s, os, xst);
  else tile_mma_n<kBf16, 2>(d, s, R, K, xs, out_s, os, nullptr);
  __syncthreads();
  return os;
}

}  // namespace pk
