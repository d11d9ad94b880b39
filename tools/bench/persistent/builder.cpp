// The host-built instruction list of one decode step for batch B (see
// instr.hpp for why round-robin over a topological order cannot deadlock).
// Order inside a layer follows the critical path, so that blocks whose
// current instruction waits have the next stage's weights already in flight.
#include "instr.hpp"

namespace pk {

static int cdiv(int a, int b) { return (a + b - 1) / b; }

std::vector<Instr> build_instrs(int B, int ctx, int part) {
  std::vector<Instr> v;
  auto add = [&](int op, int l, int a0, int a1, int a2, int sig, int w0, int n0, int w1 = -1, int n1 = 0) {
    v.push_back(Instr{op, l, a0, a1, a2, sig, w0, n0, w1, n1, 0, 0});
  };
  const int slots = B * kTopK < kE ? B * kTopK : kE;
  if (part == 2) {  // LM head alone (timing diagnosis): no producers
    for (int t = 0; t < kV / kBf16Rows; ++t) add(OP_LMHEAD, kL, 0, t, 0, -1, -1, 0);
    return v;
  }
  for (int b = 0; b < B; ++b) add(OP_EMBED, 0, b, 0, 0, ctr(0, C_IN), -1, 0);
  for (int l = 0; l < kL; ++l) {
    const int nq = cdiv(layer_nqkv(l), rows_per_tile(kH));
    const int hkv = layer_hkv(l), qd = kHq * layer_d(l);
    const int no = cdiv(kH, rows_per_tile(qd));
    const int ngu = kIMlp / kGluRows, nd = cdiv(kH, rows_per_tile(kIMlp));
    const int negu = kIExp / kGluRows, ned = cdiv(kH, rows_per_tile(kIExp));
    for (int t = 0; t < nq; ++t) add(OP_QKV, l, 0, t, 0, ctr(l, C_QKV), ctr(l, C_IN), B);
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < hkv; ++h)
        for (int s = 0; s < n_splits(ctx); ++s) add(OP_ATTN, l, b, h, s, ctr(l, C_ATT), ctr(l, C_QKV), nq);
    for (int t = 0; t < no; ++t) add(OP_O, l, 0, t, 0, ctr(l, C_O), ctr(l, C_ATT), B * hkv);
    for (int b = 0; b < B; ++b) add(OP_RESID, l, b, 0, 0, ctr(l, C_RES), ctr(l, C_O), no);
    for (int t = 0; t < kE / kBf16Rows; ++t) add(OP_ROUTER, l, 0, t, 0, ctr(l, C_ROUTED), ctr(l, C_RES), B);
    for (int t = 0; t < ngu; ++t) add(OP_MLP_GU, l, 0, t, 0, ctr(l, C_MLPGU), ctr(l, C_RES), B);
    for (int s = 0; s < slots; ++s)
      for (int t = 0; t < negu; ++t) add(OP_MOE_GU, l, s, t, 0, ctr(l, C_EGU + s), ctr(l, C_ROUTED), 1);
    for (int t = 0; t < nd; ++t) add(OP_MLP_DOWN, l, 0, t, 0, ctr(l, C_MLPD), ctr(l, C_MLPGU), ngu);
    for (int s = 0; s < slots; ++s)
      for (int t = 0; t < ned; ++t) add(OP_MOE_DOWN, l, s, t, 0, ctr(l, C_EDOWN), ctr(l, C_EGU + s), negu);
    for (int b = 0; b < B; ++b)
      add(OP_FINAL, l, b, 0, 0, ctr(l + 1, C_IN), ctr(l, C_MLPD), nd, ctr(l, C_EDOWN), slots * ned);
  }
  if (part == 0)
    for (int t = 0; t < kV / kBf16Rows; ++t) add(OP_LMHEAD, kL, 0, t, 0, -1, ctr(kL, C_IN), B);
  return v;
}

}  // namespace pk
