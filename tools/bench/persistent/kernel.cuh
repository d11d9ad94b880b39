// The persistent decode step: one resident block per SM walks entries
// blockIdx.x, + gridDim.x, ... of the instruction list.  Two shared-memory
// slots: while the current instruction waits for its producers (counters)
// and computes, the next one's weights are already streaming into the
// other slot (cp.async.bulk + mbarrier).  No grid-wide barrier anywhere.
#pragma once
#include "attn.cuh"
#include "ops_linear.cuh"
#include "ops_row.cuh"

namespace pk {

constexpr int kShBytes = 4096;
constexpr int kSmemBytes = 2 * kSlotBytes + kScratchBytes + kShBytes;

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// Thread 0: start the copy of `in` into `slot`; state 0 = deferred (routing
// not ready), 1 = copy in flight on bar, 2 = nothing to copy.
__device__ __forceinline__ int issue(const Params& P, const Instr& in, uint8_t* slot, uint64_t* bar, bool may_wait) {
  Load L;
  if (!describe_load(P, in, L, may_wait)) return 0;
  if (L.n == 0) return 2;
  unsigned total = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) total += i < L.n ? L.bytes[i] : 0u;
  fence_proxy_async();
  mbar_expect(bar, total);
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (i < L.n) bulk_g2s(slot + L.dst[i], L.src[i], L.bytes[i], bar);
  return 1;
}

// The counter values this block has already seen: a run of instructions
// waiting on the same counter (the LM head's 16,384 tiles) pays the L2 round
// trip of the acquire load once, not per instruction.
struct Known {
  int i0 = -1, i1 = -1;
  unsigned v0 = 0u, v1 = 0u;
};
__device__ __forceinline__ void wait_known(const unsigned* c, int idx, int need, Known& k) {
  if (idx < 0) return;
  if ((k.i0 == idx && k.v0 >= unsigned(need)) || (k.i1 == idx && k.v1 >= unsigned(need))) return;
  unsigned v;
  while ((v = ld_acquire(c + idx)) < unsigned(need)) __nanosleep(20);
  k.i1 = k.i0, k.v1 = k.v0;
  k.i0 = idx, k.v0 = v;
}

__global__ void __launch_bounds__(256, 1) decode_step(const __grid_constant__ Params P) {
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ __align__(8) uint64_t bars[2];
  __shared__ int state[2];
  auto slot = [&](int i) { return smem + i * kSlotBytes; };
  float* scratch = reinterpret_cast<float*>(smem + 2 * kSlotBytes);
  int* sh = reinterpret_cast<int*>(smem + 2 * kSlotBytes + kScratchBytes);
  float* red = reinterpret_cast<float*>(sh + 960);
  if (threadIdx.x == 0) {
    mbar_init(&bars[0]);
    mbar_init(&bars[1]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  unsigned phase = 0u;  // bit s: parity to wait for on slot s
  Known known;
  int cur = 0;
  int idx = blockIdx.x;
  if (threadIdx.x == 0 && idx < P.n_instr) state[0] = issue(P, P.instrs[idx], slot(0), &bars[0], false);
  for (; idx < P.n_instr; idx += gridDim.x) {
    const Instr in = P.instrs[idx];
    const unsigned long long t0 = P.trace ? globaltimer() : 0ull;
    if (threadIdx.x == 0) {
      const int nx = idx + gridDim.x;
      if (nx < P.n_instr) state[cur ^ 1] = issue(P, P.instrs[nx], slot(cur ^ 1), &bars[cur ^ 1], false);
      if (state[cur] == 0) {
        wait_counter(P.counters, ctr(in.layer, C_ROUTED), 1);
        state[cur] = issue(P, in, slot(cur), &bars[cur], true);
      }
      wait_known(P.counters, in.wait0, in.need0, known);
      wait_known(P.counters, in.wait1, in.need1, known);
    }
    __syncthreads();
    if (state[cur] == 1) {
      mbar_wait(&bars[cur], (phase >> cur) & 1u);
      phase ^= 1u << cur;
    }
    if (P.trace && threadIdx.x == 0) {
      P.trace[3 * idx] = t0;
      P.trace[3 * idx + 1] = globaltimer();
    }
    bool sig = true;
    switch (in.op) {
      case OP_EMBED: exec_embed(P, in, red); break;
      case OP_RESID: exec_resid(P, in, red); break;
      case OP_FINAL: exec_final(P, in, red); break;
      case OP_ATTN: sig = exec_attn(P, in, slot(cur), scratch, sh); break;
      default: sig = exec_linear(P, in, slot(cur), scratch, sh); break;
    }
    __syncthreads();
    if (P.trace && threadIdx.x == 0) P.trace[3 * idx + 2] = globaltimer();
    if (threadIdx.x == 0 && sig && in.signal >= 0) {
      __threadfence();
      red_release(P.counters + in.signal, 1u);
    }
    cur ^= 1;
  }
}

}  // namespace pk
