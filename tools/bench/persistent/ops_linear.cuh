// Execution of the linear instructions: the tile product (linear.cuh) and
// each one's epilogue.  Returns whether the instruction signals its counter
// (the router's last tile alone signals "routed").
#pragma once
#include "linear.cuh"
#include "loads.cuh"
#include "router.cuh"

namespace pk {

__device__ __forceinline__ unsigned long long argmax_key(float v, int idx) {
  const unsigned u = __float_as_uint(v);
  const unsigned k = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // order-preserving
  return (static_cast<unsigned long long>(k) << 32) | (0xFFFFFFFFu - unsigned(idx));
}

__device__ bool exec_linear(const Params& P, const Instr& in, const uint8_t* slot, float* out_s, int* sh) {
  const int B = P.B, l = in.layer;
  const LayerP& lp = P.layers[l < kL ? l : 0];
  switch (in.op) {
    case OP_QKV:
    case OP_O:
    case OP_MLP_DOWN: {
      const QW& w = in.op == OP_QKV ? lp.qkv : in.op == OP_O ? lp.o : lp.mlp_down;
      const int R = rows_per_tile(w.k), n0 = in.a1 * R, rows = min(R, w.n - n0);
      const XSrc xs{in.op == OP_QKV ? P.xa : in.op == OP_O ? P.attn : P.mh, w.k, nullptr, B};
      const int os = tile_mma<false>(slot, slot + r16(R * (w.k / 2)), R, w.k, xs, out_s);
      float* out = in.op == OP_QKV ? P.qkv : in.op == OP_O ? P.o : P.m;
      const float f = kDown / w.gdiv;
      for (int i = threadIdx.x; i < rows * B; i += blockDim.x) {
        const int r = i % rows, j = i / rows;
        out[size_t(j) * w.n + n0 + r] = out_s[r * os + j] * f;
      }
      return true;
    }
    case OP_MLP_GU:
    case OP_MOE_GU: {
      const bool moe = in.op == OP_MOE_GU;
      const int qi = l * kE + in.a0;
      const int e = moe ? __ldcg(P.q_expert + qi) : 0;
      if (e < 0) return true;
      const int cnt = moe ? __ldcg(P.q_cnt + qi) : B;
      const XSrc xs{moe ? P.xe : P.xm, kH, moe ? P.q_tok + qi * kMaxB : nullptr, cnt};
      const int os = tile_mma<false>(slot, slot + 2 * kGluRows * (kH / 2), 2 * kGluRows, kH, xs, out_s);
      const float f = kDown / (moe ? lp.egu_gdiv : lp.mlp_gu.gdiv);
      const int n0 = in.a1 * kGluRows, width = moe ? kIExp : kIMlp;
      __nv_bfloat16* out = moe ? P.eh + size_t(in.a0) * kMaxB * kIExp : P.mh;
      for (int i = threadIdx.x; i < kGluRows * cnt; i += blockDim.x) {
        const int r = i % kGluRows, j = i / kGluRows;
        const float gt = out_s[r * os + j] * f, up = out_s[(r + kGluRows) * os + j] * f;
        out[size_t(j) * width + n0 + r] = __float2bfloat16_rn(gelu_tanh(gt) * up);
      }
      return true;
    }
    case OP_MOE_DOWN: {
      const int qi = l * kE + in.a0;
      const int e = __ldcg(P.q_expert + qi);
      if (e < 0) return true;
      const int cnt = __ldcg(P.q_cnt + qi);
      const int R = rows_per_tile(kIExp), n0 = in.a1 * R, rows = min(R, kH - n0);
      const XSrc xs{P.eh + size_t(in.a0) * kMaxB * kIExp, kIExp, nullptr, cnt};
      const int os = tile_mma<false>(slot, slot + r16(R * (kIExp / 2)), R, kIExp, xs, out_s);
      const float f = kDown / lp.ed_gdiv;
      for (int i = threadIdx.x; i < rows * cnt; i += blockDim.x) {
        const int r = i % rows, j = i / rows;
        const int tk = __ldcg(P.q_tok + qi * kMaxB + j);  // token * 8 + kk
        const float w = __ldcg(P.q_w + qi * kMaxB + j);
        P.eo[size_t(tk) * kH + n0 + r] = out_s[r * os + j] * f * w;
      }
      return true;
    }
    case OP_ROUTER: {
      const XSrc xs{P.xr, kH, nullptr, B};
      const int os = tile_mma<true>(slot, nullptr, kBf16Rows, kH, xs, out_s);
      for (int i = threadIdx.x; i < kBf16Rows * B; i += blockDim.x) {
        const int r = i % kBf16Rows, j = i / kBf16Rows;
        P.rlog[j * kE + in.a1 * kBf16Rows + r] = out_s[r * os + j];
      }
      return router_last_tile(P, l, out_s, sh);
    }
    case OP_LMHEAD: {
      const XSrc xs{P.xa, kH, nullptr, B};
      const int os = tile_mma<true>(slot, nullptr, kBf16Rows, kH, xs, out_s);
      const int n0 = in.a1 * kBf16Rows;
      if (threadIdx.x < B) {
        const int j = threadIdx.x;
        unsigned long long best = 0;
        for (int r = 0; r < kBf16Rows; ++r) {
          const float v = 30.f * tanhf(out_s[r * os + j] / 30.f);
          if (P.logits) P.logits[size_t(j) * kV + n0 + r] = v;
          const unsigned long long k = argmax_key(v, n0 + r);
          best = k > best ? k : best;
        }
        atomicMax(P.best + j, best);
      }
      return false;
    }
    default: return true;
  }
}

}  // namespace pk
