// The NVFP4 weight side of an mma.sync m16n8k16 step, shared by the
// skinny-M kernel (k_gemv_mma.cu) and the MoE decode kernels
// (k_moe_decode.cu): a "k-step" is 128 columns; lane (g, t) of a warp holds
// one 16-byte chunk -- 32 codes -- of rows g and g+8 at columns kb + 32t..+31
// and its two group scales (StepLoad), unpacked exactly into BF16 A
// fragments paired (i, i+4) (see k_gemv_mma.cu for the exactness argument).
#pragma once

#include "gemv.cuh"

namespace seatrt::cuda {
namespace mma_fp4 {

constexpr int kKStep = 128;                         // columns per warp step
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

// One lane's raw weight bytes of one step: rows g and g+8 (NVFP4: one
// 16-byte chunk each and their two group scales; dense BF16: 64 bytes each).
template <bool kDense>
struct StepLoad {
  uint4 q[2];
  uint32_t s[2][2];
};
template <>
struct StepLoad<true> {
  uint4 q[2][4];
};

__device__ __forceinline__ void load_step(const WeightRef& w, int64_t n0, int64_t n, int64_t k0, bool k_ok,
                                          int g, StepLoad<false>& L) {
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

__device__ __forceinline__ void load_step(const WeightRef& w, int64_t n0, int64_t n, int64_t k0, bool k_ok,
                                          int g, StepLoad<true>& L) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t row = n0 + g + 8 * h;
    const uint4* p = reinterpret_cast<const uint4*>(static_cast<const char*>(w.data) + row * w.data_row_bytes + k0 * 2);
#pragma unroll
    for (int j = 0; j < 4; ++j) L.q[h][j] = k_ok && row < n ? __ldg(p + j) : make_uint4(0, 0, 0, 0);
  }
}

// The A fragments of the step's 8 MMAs: a[s][0..3] as mma.m16n8k16 wants
// them (row g low pair, row g+8 low pair, row g high pair, row g+8 high pair);
// MMA s = 2j + (0|1) covers columns 8j..8j+7 of the lane's 32, paired (i, i+4).
__device__ __forceinline__ void unpack_step(const StepLoad<false>& L, uint32_t (*a)[4]) {
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

__device__ __forceinline__ void unpack_step(const StepLoad<true>& L, uint32_t (*a)[4]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint4 u = L.q[h][j];
      a[2 * j][h] = __byte_perm(u.x, u.z, 0x5410);          // (w0, w4)
      a[2 * j][h + 2] = __byte_perm(u.x, u.z, 0x7632);      // (w1, w5)
      a[2 * j + 1][h] = __byte_perm(u.y, u.w, 0x5410);      // (w2, w6)
      a[2 * j + 1][h + 2] = __byte_perm(u.y, u.w, 0x7632);  // (w3, w7)
    }
  }
}

// The A fragment of MMA s alone (s = 2j + p: word j, pairs 2p and 2p + 1).
__device__ __forceinline__ void unpack_one(const StepLoad<false>& L, int s, uint32_t* a) {
  const int j = s / 2;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t word = j == 0 ? L.q[h].x : j == 1 ? L.q[h].y : j == 2 ? L.q[h].z : L.q[h].w;
    const uint32_t sc = L.s[h][j / 2];
    a[h] = bf16x2_mul(s % 2 ? unpack_pair<2>(word) : unpack_pair<0>(word), sc);
    a[h + 2] = bf16x2_mul(s % 2 ? unpack_pair<3>(word) : unpack_pair<1>(word), sc);
  }
}

__device__ __forceinline__ void unpack_one(const StepLoad<true>& L, int s, uint32_t* a) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint4 u = L.q[h][s / 2];
    a[h] = s % 2 ? __byte_perm(u.y, u.w, 0x5410) : __byte_perm(u.x, u.z, 0x5410);
    a[h + 2] = s % 2 ? __byte_perm(u.y, u.w, 0x7632) : __byte_perm(u.x, u.z, 0x7632);
  }
}

__device__ __forceinline__ uint32_t pack_split(float& lo, float& hi) {
  const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
  lo -= __low2float(p);
  hi -= __high2float(p);
  return *reinterpret_cast<const uint32_t*>(&p);
}

// load_step with the group scales left raw (one E4M3 byte or BF16 per
// register): finish_scales converts them when the step is consumed, so no
// instruction waits on the scale loads at issue time.  (load_step converts
// right after its byte loads, and the SASS shows that conversion waiting on
// them: the next step's loads are issued only a memory latency later.)
__device__ __forceinline__ void load_step_raw(const WeightRef& w, int64_t n0, int64_t n, int64_t k0, bool k_ok,
                                              int g, StepLoad<false>& L) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t row = n0 + g + 8 * h;
    if (k_ok && row < n) {
      L.q[h] = __ldg(reinterpret_cast<const uint4*>(static_cast<const char*>(w.data) + row * w.data_row_bytes + k0 / 2));
      const int64_t i = row * w.scale_row_elems + k0 / 16;
      if (w.kind == int32_t(WeightKind::Fp4E4m3Scales)) {
        const uint8_t* p = static_cast<const uint8_t*>(w.scales) + i;
        L.s[h][0] = __ldg(p);
        L.s[h][1] = __ldg(p + 1);
      } else {
        const unsigned short* p = static_cast<const unsigned short*>(w.scales) + i;
        L.s[h][0] = __ldg(p);
        L.s[h][1] = __ldg(p + 1);
      }
    } else {
      L.q[h] = make_uint4(0, 0, 0, 0);
      L.s[h][0] = L.s[h][1] = 0;
    }
  }
}

// The raw scales of load_step_raw as load_step leaves them (BF16 pairs of
// scale * 2^100).
__device__ __forceinline__ void finish_scales(StepLoad<false>& L, int32_t kind) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const float f = kind == int32_t(WeightKind::Fp4E4m3Scales) ? e4m3_to_float(static_cast<uint8_t>(L.s[h][j]))
                                                                 : __uint_as_float(L.s[h][j] << 16);
      const __nv_bfloat162 v = __floats2bfloat162_rn(f * kScaleUp, f * kScaleUp);
      L.s[h][j] = *reinterpret_cast<const uint32_t*>(&v);
    }
  }
}

// A 16-byte shared-memory load kept in program order with the MMAs (both
// volatile asm): otherwise the scheduler hoists the B loads of every step in
// flight and the kernel runs out of registers.
__device__ __forceinline__ uint4 lds128(unsigned addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}

// Activation rows staged once per block in shared memory as the MMA's B
// fragments, so that a step reads them with one 16-byte shared load per
// 8 columns per plane instead of global loads (and, for F32, the split) in
// every warp at every step.  Layout: token m at word m * tok_stride; plane
// p at + p * plane_words (plane_words = chunks * 16); per 32-column chunk
// c, 16 words; word 4j + i of a chunk = columns (32c + 8j + i, 32c + 8j +
// i + 4), the pairing of unpack_pair.  kFromF32: F32 rows split into
// kPlanes BF16 terms, each the rounded remainder of the ones before (3: hi +
// mid + lo, exact; 2: hi + lo, relative error <= 2^-16); otherwise BF16 rows,
// kPlanes planes `lo_offset` elements apart.  `chunks` (>= k / 32) chunks
// per plane are written, those past K as zeros, so that a kernel may read
// whole 128-column steps without a bounds check.  row_of(m): token m's row
// of x.  All threads of the block take part; the caller puts a barrier
// before (previous readers) and after.
template <int kPlanes, bool kFromF32, class RowOf>
__device__ void stage_b_fragments(const Mat& x, int64_t lo_offset, int64_t k, int chunks, int valid, int tok_stride,
                                  RowOf row_of, uint32_t* xs) {
  const int plane_words = chunks * 16, k_chunks = static_cast<int>(k / 32);
  const int units = valid * chunks * 4;
#pragma unroll 1
  for (int i = threadIdx.x; i < units; i += blockDim.x) {
    const int m = i / (chunks * 4), c = (i / 4) % chunks, j = i % 4;
    const int64_t row = row_of(m), col = int64_t(c) * 32 + 8 * j;
    uint32_t* dst = xs + m * tok_stride + c * 16 + 4 * j;
    if (c >= k_chunks) {
#pragma unroll
      for (int p = 0; p < kPlanes; ++p) *reinterpret_cast<uint4*>(dst + p * plane_words) = make_uint4(0, 0, 0, 0);
    } else if constexpr (kFromF32) {
      const float* src = static_cast<const float*>(x.data) + row * x.row_stride + col;
      const float4 u = *reinterpret_cast<const float4*>(src), v = *reinterpret_cast<const float4*>(src + 4);
      float f[8] = {u.x, u.y, u.z, u.w, v.x, v.y, v.z, v.w};
#pragma unroll
      for (int p = 0; p < kPlanes; ++p) {
        uint4 w;
        w.x = pack_split(f[0], f[4]);
        w.y = pack_split(f[1], f[5]);
        w.z = pack_split(f[2], f[6]);
        w.w = pack_split(f[3], f[7]);
        *reinterpret_cast<uint4*>(dst + p * plane_words) = w;
      }
    } else {
#pragma unroll
      for (int p = 0; p < kPlanes; ++p) {
        const __nv_bfloat16* src =
            static_cast<const __nv_bfloat16*>(x.data) + p * lo_offset + row * x.row_stride + col;
        const uint4 u = *reinterpret_cast<const uint4*>(src);
        uint4 w;
        w.x = __byte_perm(u.x, u.z, 0x5410);  // (x0, x4)
        w.y = __byte_perm(u.x, u.z, 0x7632);  // (x1, x5)
        w.z = __byte_perm(u.y, u.w, 0x5410);  // (x2, x6)
        w.w = __byte_perm(u.y, u.w, 0x7632);  // (x3, x7)
        *reinterpret_cast<uint4*>(dst + p * plane_words) = w;
      }
    }
  }
}

// Staged words per token for stage_b_fragments with k / 32 chunks (pass K
// rounded up to kKStep for whole steps): padded so that consecutive tokens
// start 64 bytes apart modulo 128 (fewer bank conflicts).
__host__ __device__ inline int32_t staged_token_words(int planes, int64_t k) {
  const int64_t w = planes * (k / 32) * 16;
  return static_cast<int32_t>(w % 32 == 0 ? w + 16 : w);
}

}  // namespace mma_fp4
}  // namespace seatrt::cuda
