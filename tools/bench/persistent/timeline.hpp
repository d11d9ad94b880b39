// --timeline: one traced step (globaltimer at each instruction's begin, when
// its producers and bytes were there, and its end) summarised per
// instruction class: how long blocks waited and how long they worked, and
// the step's span.  The trace's stores cost a little time of their own.
#pragma once
#include <algorithm>
#include <cstdio>
#include <vector>

#include "instr.hpp"

namespace pk {

inline void print_timeline(const std::vector<Instr>& ins, const std::vector<unsigned long long>& tr, int B) {
  const char* names[] = {"?", "embed", "qkv", "attn", "o_proj", "resid", "router", "mlp_gu", "mlp_down", "moe_gu",
                         "moe_down", "final", "lm_head"};
  double wait[13] = {}, work[13] = {};
  long cnt[13] = {};
  unsigned long long t_min = ~0ull, t_max = 0, lm_first = ~0ull, l0 = ~0ull, l29 = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    const int op = ins[i].op;
    const unsigned long long a = tr[3 * i], b = tr[3 * i + 1], c = tr[3 * i + 2];
    wait[op] += double(b - a);
    work[op] += double(c - b);
    ++cnt[op];
    t_min = std::min(t_min, a);
    t_max = std::max(t_max, c);
    if (op == OP_LMHEAD) lm_first = std::min(lm_first, b);
    if (op == OP_QKV && ins[i].layer == 0) l0 = std::min(l0, b);
    if (op == OP_FINAL && ins[i].layer == kL - 1) l29 = std::max(l29, c);
  }
  std::printf("timeline B=%d: step span %.1f us; layers (first qkv ready -> last final end) %.1f us = %.1f us/layer; "
              "LM head from first ready tile to end %.1f us\n",
              B, (t_max - t_min) / 1e3, (l29 - l0) / 1e3, (l29 - l0) / 1e3 / kL, (t_max - lm_first) / 1e3);
  std::printf("| class | instructions | mean wait us | mean work us | total work us (all SMs) |\n|---|---:|---:|---:|---:|\n");
  for (int op = 1; op < 13; ++op)
    if (cnt[op])
      std::printf("| %s | %ld | %.2f | %.2f | %.0f |\n", names[op], cnt[op], wait[op] / cnt[op] / 1e3,
                  work[op] / cnt[op] / 1e3, work[op] / 1e3);
}

}  // namespace pk
