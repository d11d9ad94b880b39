// The instruction list a persistent block walks, and the counters that order
// it.  Built once on the host per batch size; block b runs entries b, b + G,
// b + 2G, ... of a topologically ordered list, so the earliest unfinished
// entry is always some block's current one and its producers are done: no
// deadlock without any grid-wide barrier.
#pragma once
#include <vector>
#include "model.hpp"

namespace pk {

enum Op : int {
  OP_EMBED = 1,   // a0 = token row
  OP_QKV,         // a1 = tile
  OP_ATTN,        // a0 = row, a1 = kv head, a2 = split
  OP_O,           // a1 = tile
  OP_RESID,       // a0 = row
  OP_ROUTER,      // a1 = tile (16 experts)
  OP_MLP_GU,      // a1 = tile (16 gate + 16 up rows)
  OP_MLP_DOWN,    // a1 = tile
  OP_MOE_GU,      // a0 = slot, a1 = tile (16 gate + 16 up rows)
  OP_MOE_DOWN,    // a0 = slot, a1 = tile
  OP_FINAL,       // a0 = row
  OP_LMHEAD,      // a1 = tile (16 vocab rows)
};

// Counters, per layer l at l * kCounterStride (layer kL: the LM head's input).
enum Ctr : int {
  C_IN = 0, C_QKV, C_ATT, C_O, C_RES, C_ROUTED, C_MLPGU, C_MLPD, C_EDOWN,
  T_ROUTER, C_EGU = 16 /* + slot, 128 */, T_ATT = 160 /* + row * 8 + kv head */,
};
__host__ __device__ inline int ctr(int l, int c) { return l * kCounterStride + c; }
constexpr int kCounters = (kL + 1) * kCounterStride;

// Rows of one quantized-linear instruction: as many 16-row groups as fit a
// 94 KiB shared-memory slot.
constexpr int kSlotBytes = 96256;
__host__ __device__ constexpr int rows_per_tile(int k) {
  return ((kSlotBytes / (k / 2 + k / 16)) / 16) * 16 > 240 ? 240 : ((kSlotBytes / (k / 2 + k / 16)) / 16) * 16;
}
constexpr int kGluRows = 16;   // gate rows per GLU tile (and as many up rows)
constexpr int kBf16Rows = 16;  // rows per bf16 tile (router, LM head)

struct Instr {  // 48 bytes, read by one thread as three int4
  int op, layer, a0, a1, a2, signal;  // signal: counter index or -1
  int wait0, need0, wait1, need1;     // counter index (-1: none) and target
  int pad0, pad1;
};

__host__ __device__ inline int n_splits(int ctx) { return ctx / kSplitTok; }

// part: 0 the whole step, 1 the 30 layers only, 2 the LM head only (the
// last two for timing diagnosis).
std::vector<Instr> build_instrs(int B, int ctx, int part = 0);

}  // namespace pk
