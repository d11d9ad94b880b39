// What an instruction streams into its shared-memory slot before it waits on
// its activations: weight rows (never activation-dependent) or, for
// attention, the split's cached K/V pages (written by earlier steps).  MoE
// tiles first need the router's queue (their expert id), so their copy may be
// deferred until their turn (see kernel.cu).
#pragma once
#include "instr.hpp"
#include "sync.cuh"

namespace pk {

struct Load {
  const void* src[8];
  unsigned bytes[8];
  unsigned dst[8];
  int n;
};

__device__ __forceinline__ unsigned r16(unsigned b) { return (b + 15u) & ~15u; }

// A quantized tile: rows [n0, n0 + rows) of w at slot offsets (data: doff,
// scales: soff).
__device__ __forceinline__ void add_q(Load& L, const uint8_t* data, const uint8_t* scl, int K, int n0, int rows,
                                      unsigned doff, unsigned soff) {
  L.src[L.n] = data + size_t(n0) * (K / 2);
  L.bytes[L.n] = r16(rows * (K / 2));
  L.dst[L.n++] = doff;
  L.src[L.n] = scl + size_t(n0) * (K / 16);
  L.bytes[L.n] = r16(rows * (K / 16));
  L.dst[L.n++] = soff;
}
__device__ __forceinline__ void add_plain(Load& L, const QW& w, int tile, int R) {
  const int n0 = tile * R, rows = min(R, w.n - n0);
  add_q(L, w.data, w.scl, w.k, n0, rows, 0, r16(R * (w.k / 2)));
}
// GLU tile: 16 gate rows then 16 up rows (up_off rows later in the tensor).
__device__ __forceinline__ void add_glu(Load& L, const uint8_t* data, const uint8_t* scl, int K, int n0, int up_off) {
  const unsigned half = kGluRows * (K / 2), soff = 2 * half, shalf = kGluRows * (K / 16);
  add_q(L, data, scl, K, n0, kGluRows, 0, soff);
  add_q(L, data, scl, K, up_off + n0, kGluRows, half, soff + shalf);
}

// Fills L; returns false when the copy must wait for the router's queue
// (MoE tile whose layer is not routed yet).  expert_out: the MoE tile's
// expert (-1: empty slot, nothing to load).
__device__ bool describe_load(const Params& P, const Instr& in, Load& L, bool may_wait_route) {
  L.n = 0;
  const LayerP& lp = P.layers[in.layer < kL ? in.layer : 0];
  switch (in.op) {
    case OP_QKV: add_plain(L, lp.qkv, in.a1, rows_per_tile(kH)); break;
    case OP_O: add_plain(L, lp.o, in.a1, rows_per_tile(lp.o.k)); break;
    case OP_MLP_DOWN: add_plain(L, lp.mlp_down, in.a1, rows_per_tile(kIMlp)); break;
    case OP_MLP_GU: add_glu(L, lp.mlp_gu.data, lp.mlp_gu.scl, kH, in.a1 * kGluRows, kIMlp); break;
    case OP_MOE_GU:
    case OP_MOE_DOWN: {
      if (!may_wait_route && !counter_ready(P.counters, ctr(in.layer, C_ROUTED), 1)) return false;
      const int e = __ldcg(P.q_expert + in.layer * kE + in.a0);
      if (e < 0) return true;
      if (in.op == OP_MOE_GU) {
        add_glu(L, lp.egu + size_t(e) * 2 * kIExp * (kH / 2), lp.egu_s + size_t(e) * 2 * kIExp * (kH / 16), kH,
                in.a1 * kGluRows, kIExp);
      } else {
        const int R = rows_per_tile(kIExp), n0 = in.a1 * R;
        add_q(L, lp.ed + size_t(e) * kH * (kIExp / 2), lp.ed_s + size_t(e) * kH * (kIExp / 16), kIExp, n0,
              min(R, kH - n0), 0, r16(R * (kIExp / 2)));
      }
      break;
    }
    case OP_ROUTER:
      L.src[0] = lp.router + size_t(in.a1) * kBf16Rows * kH;
      L.bytes[0] = kBf16Rows * kH * 2;
      L.dst[0] = 0;
      L.n = 1;
      break;
    case OP_LMHEAD:
      L.src[0] = P.embed + size_t(in.a1) * kBf16Rows * kH;
      L.bytes[0] = kBf16Rows * kH * 2;
      L.dst[0] = 0;
      L.n = 1;
      break;
    case OP_ATTN: {
      const int D = layer_d(in.layer), hkv = layer_hkv(in.layer);
      const int per = kSplitTok / kPageTok;
      for (int i = 0; i < per; ++i) {
        const int page = P.block_table[in.a0 * P.pages_per_seq + in.a2 * per + i];
        const size_t off = (size_t(page) * hkv + in.a1) * kPageTok * D;
        L.src[i] = lp.kc + off;
        L.src[per + i] = lp.vc + off;
        L.bytes[i] = L.bytes[per + i] = kPageTok * D;
        L.dst[i] = i * kPageTok * D;
        L.dst[per + i] = kSplitTok * D + i * kPageTok * D;
      }
      L.n = 2 * per;
      break;
    }
    default: break;
  }
  return true;
}

}  // namespace pk
