// The fused route operation's kernel (k_route.cu): a MoE layer's router at
// decode sizes in one launch (ops_route.cpp checks the arguments and runs
// the unfused sequence where this kernel does not fit).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "launch.hpp"

namespace seatrt::cuda {

constexpr int64_t kRouteMaxRows = 32;  // tokens the fused kernel takes

struct RouteProblem {
  const __nv_bfloat16* w = nullptr;  // router [e, h], BF16 rows w_row_elems apart (16-byte aligned)
  int64_t w_row_elems = 0;
  int64_t e = 0, h = 0;               // experts, hidden size
  Mat x;                              // [T, h] F32, T <= kRouteMaxRows
  const float* router_gain = nullptr; // [h] F32, NULL = none
  const float* expert_gain = nullptr; // [h] F32, NULL = none
  float* expert_in = nullptr;         // [T, h] F32, rows expert_in_stride apart; NULL = not wanted
  int64_t expert_in_stride = 0;
  float* logits = nullptr;            // [T, e] F32, rows logits_stride apart
  int64_t logits_stride = 0;
  float eps = 0.0f;
  int32_t top_k = 0;
  bool renormalize = false;
  const void* per_expert_scale = nullptr;  // [e], NULL = none
  int32_t scale_dtype = 0;
  int32_t* ids = nullptr;             // [T, top_k]
  float* weights = nullptr;           // [T, top_k]
  // Device int, zero before the launch; the launch leaves it zero (its last
  // block counts the others in and resets it).  One per stream.
  int32_t* counter = nullptr;
};

// Whether the fused kernel takes the problem (the pointers' alignment, the
// sizes above, e <= 256, top_k <= 32).
bool route_fused_fits(const RouteProblem& p);

// One launch (PDL): blocks, one per expert (and group of 8 tokens under
// SEATRT_ROUTE=groups), compute the logits (the norm's 1/rms applied after
// the product) and a slice of their tokens' expert_in each; the last block
// to finish runs the softmax and top-k of every row (router_topk.cuh).
int launch_route_fused(Stream s, const RouteProblem& p);

}  // namespace seatrt::cuda
