// Gemma-4 26B-A4B decode shapes and the device-side views of one synthetic
// NVFP4A16 working set, in the CUDA provider's weight layouts: a quantized
// Linear is row-major E2M1 codes [N, K/2] (element 2i low nibble of byte i),
// one E4M3 scale per 16 columns [N, K/16], and a float divisor (w = fp4 *
// scale / gdiv); each expert's gate, up and down are such tensors.
#pragma once
#include <cuda_bf16.h>
#include <cstdint>

namespace pk {

constexpr int kH = 2816, kV = 262144, kL = 30, kE = 128, kTopK = 8;
constexpr int kIMlp = 2112, kIExp = 704, kHq = 16;
constexpr int kMaxB = 32;
constexpr int kPageTok = 16;       // tokens per KV page
constexpr int kSplitTok = 64;      // cached tokens per attention split
constexpr int kCounterStride = 512;  // counters per layer (see counters.hpp)

__host__ __device__ constexpr bool layer_full(int l) { return l % 6 == 5; }
__host__ __device__ constexpr int layer_d(int l) { return layer_full(l) ? 512 : 256; }
__host__ __device__ constexpr int layer_hkv(int l) { return layer_full(l) ? 2 : 8; }
// fused q|k|v rows (full layers: k only, V = raw K projection, k_eq_v)
__host__ __device__ constexpr int layer_nqkv(int l) {
  return kHq * layer_d(l) + (layer_full(l) ? 1 : 2) * layer_hkv(l) * layer_d(l);
}

struct QW {  // one NVFP4 tensor [n, k]
  const uint8_t* data;
  const uint8_t* scl;
  float gdiv;
  int n, k;
};

struct LayerP {
  QW qkv, o, mlp_gu, mlp_down;          // mlp_gu: gate rows [0,2112), up [2112,4224)
  const uint8_t *egu, *egu_s, *ed, *ed_s;  // experts: gu [128][1408][K/2], down [128][2816][352]
  float egu_gdiv, ed_gdiv;
  const __nv_bfloat16* router;          // [128][2816] bf16 (kept unquantized)
  const float *g_in, *g_postattn, *g_preffn, *g_preffn2, *g_post1, *g_post2, *g_post;
  const float *router_scale, *per_expert_scale, *q_norm, *k_norm;
  float layer_scalar;
  uint8_t *kc, *vc;  // fp8 e4m3 pages [page][hkv][kPageTok][d]
};

struct Params {
  const LayerP* layers;
  const __nv_bfloat16* embed;  // [V][H], also the LM head
  const float* final_norm;
  int B, ctx, pages_per_seq;
  const int* tokens;       // [B]
  const int* block_table;  // [B][pages_per_seq]
  // activations (reused across layers; the dependency chain orders them)
  float *h, *r, *o, *m, *qkv, *rlog, *eo;  // eo [B][8][H]
  __nv_bfloat16 *xa, *xm, *xe, *xr, *attn, *mh, *eh;  // eh [128][32][704]
  float* attn_part;  // [B][8][splits][8 heads][D+2]
  // MoE task queue per layer, written by the router's last tile
  int* q_expert;    // [L][128]  expert of slot, -1 none
  int* q_cnt;       // [L][128]
  int* q_tok;       // [L][128][32]  token * 8 + kk
  float* q_w;       // [L][128][32]
  int* tok_exp;     // [L][B][8]  (check: router agreement)
  unsigned* counters;
  unsigned long long* best;  // [B] packed (logit key, ~index)
  float* logits;             // [B][V] or null (check mode)
  const struct Instr* instrs;
  unsigned long long* trace;  // [n_instr][3] globaltimer: begin, ready, end (or null)
  int n_instr;
};

}  // namespace pk
