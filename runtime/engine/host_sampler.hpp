// Sampling on the host from fp32 logits, with the semantics of the kernel
// table's sample op (kernels.h seatrt_sample_args): logprobs from the RAW
// logits; penalties, temperature, top-k, top-p, min-p and the allowed mask
// shape the draw (the logit bias first, as kernels.h orders it); (seed, step) fully determine it; a row with a NaN or
// infinity is reported non-finite and yields no token.  Used when the
// kernel provider has no sample op (and by the tests as the reference).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sequence.hpp"

namespace seatrt::engine {

struct SampleInput {
  std::span<const float> logits;          // one row, [vocab]
  const SamplingParams* params = nullptr;
  uint64_t step = 0;                      // index of the token being drawn
  std::span<const int32_t> prompt_tokens;
  std::span<const int32_t> output_tokens;
  std::span<const uint32_t> allowed_mask; // empty = no constraint
};

struct SampleResult {
  bool non_finite = false;
  TokenEvent event;
};

SampleResult sample_on_host(const SampleInput& input);

// What is wrong with `p` by the sample op's rules (kernels.h: temperature
// finite and >= 0, top_p in (0, 1], top_k >= 0, min_p in [0, 1], finite
// penalties, repetition_penalty > 0; bias ids ascending, distinct, inside
// [0, vocab), with finite values), or "" when nothing is.  The engine
// checks each row with it before sampling a batch, because a provider
// refuses the whole batch for one bad row.
std::string sampling_params_problem(const SamplingParams& p, int32_t vocab);

}  // namespace seatrt::engine
