// The skinny-M weight kernel shared by linear and moe: L lanes (32, 16 or 8,
// chosen by K so short rows keep lanes busy) per output row; each lane keeps
// kUnroll 16-byte weight loads in flight, unpacks them in registers and
// multiplies them with up to kTile activation rows at once, so each weight
// byte is read once per tile.
//
// FP4 unpack: a 32-bit word holds 8 E2M1 codes, code i in bits 4i..4i+3.
// Shifting the word left by 4*(3-i) puts code i at bits 12..15 and code i+4
// at bits 28..31; `(t & 0x80008000) | ((t & 0x70007000) >> 3)` then is a
// half2 whose lanes are exactly fp4 * 2^-14 (sign to bit 15, the two exponent
// bits and the mantissa bit to the bottom of the fp16 exponent/top of the
// mantissa; code 1 becomes the subnormal 2^-15).  The factor 2^14 is put back
// through the group scale, so the math is exact before fp32 accumulation.
#pragma once

#include "device_common.cuh"

namespace seatrt::cuda {

constexpr int kGemvWarps = 4;
constexpr int kMaxTile = 8;  // activation rows per weight pass (1, 4 or 8: template)

// Which rows a block works on: a plain linear has one group (rows 0..M-1);
// MoE has one group per active expert, listed by the grouping kernel.
struct GemvGroups {
  const int32_t* active = nullptr;      // expert id per slot; null: one group
  const int32_t* num_active = nullptr;  // device scalar
  const int32_t* offsets = nullptr;     // [E+1] into sorted
  const int32_t* sorted = nullptr;      // assignment ids grouped by expert
  int64_t rows = 0;                     // the one group's size when active is null
};

// linear_multi: up to kMultiMax weights of one x in one launch,
// their 16-row output tiles laid end to end over blockIdx.x (tensor-core
// kernel only).  count 0: the one weight GemvArgs::w, n and out.
constexpr int kMultiMax = 4;
struct GemvMulti {
  int32_t count = 0;
  int32_t first_tile[kMultiMax + 1] = {};  // tile where weight i starts; [count] = all tiles
  WeightRef w[kMultiMax];
  Mat out[kMultiMax];
  int64_t n[kMultiMax] = {};
};

struct GemvArgs {
  WeightRef w;                     // used when table is null
  WeightRef w_up;                  // GLU: the `up` weight when table_up is null
  const WeightRef* table = nullptr;
  const WeightRef* table_up = nullptr;
  bool glu = false;
  int32_t act = 0;
  int64_t n = 0, k = 0;
  Mat x;
  int32_t x_div = 1;               // activation row = assignment / x_div
  Mat out;                         // row = assignment
  const float* row_weight = nullptr;  // multiplies each assignment's output
  bool vec = false;                // weights and x allow 16-byte loads
  bool stage = false;              // x tiles are staged in dynamic shared memory
  // Two-plane BF16 values (tensor-core kernel only): v = hi + lo, the lo
  // plane `*_lo_offset` elements after the hi plane (0: one plane).  The MoE
  // carries its gate/up result h to down this way (16 significant bits).
  int64_t x_lo_offset = 0;
  int64_t out_lo_offset = 0;
  GemvGroups groups;
  // Tensor-core kernel, plain NVFP4 Linear: raw group scales converted when
  // consumed (the default; SEATRT_LINEAR_DECODE=plain turns it off, see
  // load_step_raw).
  bool raw_scales = false;
  // Plain NVFP4 Linears with F32 x and few rows: x staged once per block in
  // shared memory as f32_planes BF16 planes (k_gemv_mma.cu kStage); the
  // default, SEATRT_LINEAR_DECODE=nostage turns it off.
  bool stage_x = false;
  // BF16 planes F32 x is split into, staged or split once: 2 (hi, lo:
  // within 2^-16 of x; the default) or 3 (hi, mid, lo: exact;
  // SEATRT_LINEAR_DECODE=p3).
  int f32_planes = 2;
  // Most 8-token n-tiles a block takes at once (1, 2 or 4); more tokens
  // take more passes over the block's weights (SEATRT_LINEAR_DECODE=nt1 /
  // nt2, a benchmarking switch: fewer registers against repeated unpacking).
  int max_ntiles = 4;
  // x is BF16 in x_planes planes (an F32 activation split once by
  // launch_to_planes), x_lo_offset elements apart; 0: not split.
  int x_planes = 0;
  GemvMulti multi;
};

__device__ __forceinline__ float e4m3_to_float(uint8_t b) {
  __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E4M3);
  return __half2float(__half(h));
}

// 8 codes of one 32-bit word to floats (fp4 * 2^-14), in element order.
__device__ __forceinline__ void unpack8(uint32_t q, float* w) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t t = q << (4 * (3 - i));
    const uint32_t h = (t & 0x80008000u) | ((t & 0x70007000u) >> 3);
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h));
    w[i] = f.x;
    w[i + 4] = f.y;
  }
}

__device__ __forceinline__ float group_scale(const WeightRef& w, int64_t row, int64_t group) {
  const int64_t i = row * w.scale_row_elems + group;
  if (w.kind == int32_t(WeightKind::Fp4E4m3Scales))
    return e4m3_to_float(static_cast<const uint8_t*>(w.scales)[i]);
  return __bfloat162float(static_cast<const __nv_bfloat16*>(w.scales)[i]);
}

// 8 activations starting at element k0 of row r (16-byte aligned), as floats.
__device__ __forceinline__ void load_x8(const Mat& x, int64_t r, int64_t k0, float* v) {
  if (x.dtype == SEATRT_DTYPE_F32) {
    const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(x.data) + r * x.row_stride + k0);
    const float4 a = p[0], b = p[1];
    v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
  } else {
    uint4 u = *reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(x.data) + r * x.row_stride + k0);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = __bfloat1622float2(h[j]);
      v[2 * j] = f.x;
      v[2 * j + 1] = f.y;
    }
  }
}

// 8 weights of word `word` (0..3) of a 16-byte chunk, as floats; for FP4 the
// chunk holds 32 weights (two groups) and the values come out as fp4 * 2^-14
// (the caller multiplies by the group scale); dense chunks hold 8 values
// (BF16/F16) and `word` must be 0 and the 16 bytes are all 8 values.
__device__ __forceinline__ void unpack_dense8(int32_t kind, const uint4& q, float* v) {
  const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float2 f;
    if (kind == int32_t(WeightKind::DenseBf16)) f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[j]));
    else f = __half22float2(*reinterpret_cast<const __half2*>(&w[j]));
    v[2 * j] = f.x;
    v[2 * j + 1] = f.y;
  }
}

// One weight (scale applied) for the ragged tail.
__device__ __forceinline__ float load_w1(const WeightRef& w, int64_t row, int64_t kk) {
  const char* base = static_cast<const char*>(w.data) + row * w.data_row_bytes;
  switch (w.kind) {
    case int32_t(WeightKind::Fp4E4m3Scales):
    case int32_t(WeightKind::Fp4Bf16Scales): {
      const uint8_t b = reinterpret_cast<const uint8_t*>(base)[kk / 2];
      const uint32_t code = (kk & 1) ? (b >> 4) : (b & 15u);
      // E2M1 magnitudes: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
      const uint32_t m = code & 7u;
      const float v = m < 4 ? 0.5f * static_cast<float>(m) : static_cast<float>(1u << (m / 2 - 1)) * (m & 1u ? 1.5f : 1.0f);
      return ((code & 8u) ? -v : v) * group_scale(w, row, kk / 16);
    }
    case int32_t(WeightKind::DenseBf16):
      return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(base)[kk]);
    case int32_t(WeightKind::DenseF16):
      return __half2float(reinterpret_cast<const __half*>(base)[kk]);
    default:
      return reinterpret_cast<const float*>(base)[kk];
  }
}

constexpr int kUnroll = 4;  // 16-byte chunks per lane in flight at once

// acc[m] += W[row] . x[xrow[m]] for the tile's valid rows, by the L lanes
// (sub = 0..L-1) of a row group.  Each lane first issues kUnroll independent
// 16-byte weight loads (memory-level parallelism is what a GEMV lives on),
// then consumes them word by word against the activations.
template <int L, int kTile>
__device__ __forceinline__ void dot_tile(const WeightRef& w, int64_t row, int64_t k, const Mat& x,
                                         const int32_t* xrow, int valid, bool vec, int sub, float* acc) {
  const bool fp4 = w.kind <= int32_t(WeightKind::Fp4Bf16Scales);
  const bool f32w = w.kind == int32_t(WeightKind::DenseF32);
  // Values per 16-byte chunk; F32 weights take the scalar path.
  const int64_t per = fp4 ? 32 : 8;
  const int64_t full = (vec && !f32w) ? k / per : 0;
  const char* base = static_cast<const char*>(w.data) + row * w.data_row_bytes;
  for (int64_t c0 = sub; c0 < full; c0 += int64_t(L) * kUnroll) {
    uint4 q[kUnroll];
    float s0[kUnroll], s1[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = c0 + int64_t(u) * L;
      if (c < full) {
        q[u] = __ldg(reinterpret_cast<const uint4*>(base) + c);
        if (fp4) {
          s0[u] = group_scale(w, row, 2 * c) * 16384.0f;
          s1[u] = group_scale(w, row, 2 * c + 1) * 16384.0f;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = c0 + int64_t(u) * L;
      if (c >= full) break;
      if (fp4) {
        const uint32_t words[4] = {q[u].x, q[u].y, q[u].z, q[u].w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          float wv[8];
          unpack8(words[j], wv);
          const float sc = j < 2 ? s0[u] : s1[u];
#pragma unroll
          for (int m = 0; m < kTile; ++m) {
            if (m < valid) {
              float xv[8];
              load_x8(x, xrow[m], c * 32 + j * 8, xv);
              float p = 0.0f;
#pragma unroll
              for (int i = 0; i < 8; ++i) p = fmaf(wv[i], xv[i], p);
              acc[m] = fmaf(p, sc, acc[m]);
            }
          }
        }
      } else {
        float wv[8];
        unpack_dense8(w.kind, q[u], wv);
#pragma unroll
        for (int m = 0; m < kTile; ++m) {
          if (m < valid) {
            float xv[8];
            load_x8(x, xrow[m], c * 8, xv);
#pragma unroll
            for (int i = 0; i < 8; ++i) acc[m] = fmaf(wv[i], xv[i], acc[m]);
          }
        }
      }
    }
  }
  for (int64_t kk = full * per + sub; kk < k; kk += L) {
    const float wv = load_w1(w, row, kk);
#pragma unroll
    for (int m = 0; m < kTile; ++m)
      if (m < valid) acc[m] = fmaf(wv, mat_load(x, xrow[m], kk), acc[m]);
  }
}

// Sum over the L lanes of a row group (aligned groups of L lanes).
template <int L>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int o = L / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The tensor-core skinny-M kernel (k_gemv_mma.cu): NVFP4 or dense BF16
// weights (MoE blocks whose expert is neither fall back to a plain loop
// inside it), BF16 or F32 activations with 16-byte rows, K a multiple of 32.
bool gemv_mma_fits(const GemvArgs& a);
// `max_rows`: the most activation rows one weight sees (picks the n-tiles).
int launch_gemv_mma(cudaStream_t st, const GemvArgs& a, unsigned slots, int64_t max_rows);
// Whether launch_gemv_mma stages this F32 x in shared memory itself.
bool gemv_mma_stages_x(const GemvArgs& a, int64_t max_rows);
// Whether linear_multi's launch (a.multi set) has a kernel for these args:
// raw scales, and x staged, split into planes or BF16.
bool gemv_mma_multi_fits(const GemvArgs& a, int64_t max_rows);

// The MoE decode path (k_moe_decode.cu): two launches, no grouping kernel.
// `split` (1, 2, 4, 8; else chosen from the expert count) is the warps
// sharing one gate/up tile's K, `down_warps` (4 or 8) the warps of a down
// block; `old` keeps the four-launch path of k_linear.cu; `wide_scales`
// loads each row's two group scales with one instruction (see load_raw in
// k_moe_decode.cu).  Chosen by launch_moe from SEATRT_MOE_DECODE (a
// benchmarking and test switch: ','- or '+'-separated "old", "s1".."s8",
// "d4"/"d8", "w" wide scales, "n" narrow, "a" cp.async stages).
struct MoeDecodeChoice {
  bool old = false;
  int split = 0;
  int down_warps = 0;  // 0: chosen from the token count
  bool wide_scales = false;  // "w": the register ring with one scale load per row
  // Weights through shared memory with cp.async stages: the default since the
  // 2026-12-01 device run (10-20% faster than the register ring from 4
  // tokens on); "r" and "w" take the ring.
  bool async_loads = true;
  // BF16 planes F32 x is split into for gate/up: 2 (hi + lo, within 2^-16
  // of x: the default since the 2026-12-01 03:40 device run, batch-32 MoE
  // 11.08 -> 9.48 ms) or 3 ("p3": exact, a half more MMAs and shared loads).
  int f32_planes = 2;
  // Most tokens a gate/up block stages per pass ("t1".."t8"; 0: as many as
  // fit, up to 8): fewer is less shared memory per block (more blocks per
  // SM) and another pass over the weights, from L2, for an expert with more.
  int max_tile = 0;
  // "e": the down kernel reads the router's ids, its expert's table entry and
  // its first weight steps before its PDL wait, behind gate/up's work
  // (gate/up then waits before it releases the down).  Opt-in until
  // measured on a device (k_moe_decode.cu, pdl_begin).
  bool down_early = false;
  // "l": at <= 2 tokens, each gate/up block asks L2 for its share of its
  // expert's down weights (cp.async.bulk.prefetch), so the down streams
  // them from L2: at batch 1 the down took 14 us for 8.9 MB (latency-bound,
  // ~0.6 TB/s).  Opt-in until measured on a device.
  bool l2_down = false;
};
bool moe_decode_fits(const MoeProblem& p);
size_t moe_decode_workspace_bytes(const MoeProblem& p);
int launch_moe_decode(cudaStream_t st, const MoeProblem& p, void* workspace, const MoeDecodeChoice& choice);

}  // namespace seatrt::cuda
