// The boundary between sample.cpp (argument checks, uploads) and the
// sampling kernel (k_sample.cu): plain structs only, so the host compiler
// reads it too.  One cluster of thread blocks samples one row on the device;
// only SampleRowResult comes back to the host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "launch.hpp"

namespace seatrt::cuda {

constexpr int kSampleMaxTop = 20;

// One row's parameters, prepared on the host (device memory).
struct SampleRowParams {
  double u = 0.0;            // the seeded draw in [0, 1) (SplitMix64 of seed, step)
  float temperature = 0.0f;  // used when greedy == 0
  float top_p = 1.0f;
  float min_p = 0.0f;
  float presence = 0.0f;
  float frequency = 0.0f;
  float repetition = 1.0f;
  int32_t top_k = 0;
  int32_t greedy = 0;           // temperature < 1e-5: arg-max of the penalised logits
  int32_t penalize_prompt = 0;  // repetition != 1: prompt tokens are penalised too
  int32_t penalize_output = 0;  // any penalty: output tokens are penalised
  int64_t prompt_offset = 0;    // into SampleProblem::tokens
  int64_t num_prompt = 0;
  int64_t output_offset = 0;
  int64_t num_output = 0;
  int64_t mask_offset = -1;  // into SampleProblem::masks, in words; -1: no mask
  int64_t bias_offset = 0;   // into SampleProblem::bias_ids / bias_values
  int64_t num_bias = 0;      // logit bias entries (ids ascending, distinct)
};

// One row's results (device memory, copied back to the host).
struct SampleRowResult {
  int32_t token = -1;
  int32_t non_finite = 0;
  float logprob = 0.0f;
  int32_t reserved = 0;
  int32_t top_ids[kSampleMaxTop];
  float top_logprobs[kSampleMaxTop];
};

struct SampleProblem {
  const float* logits = nullptr;  // [rows, vocab], rows row_stride apart
  int64_t rows = 0;
  int64_t vocab = 0;
  int64_t row_stride = 0;
  int32_t num_top = 0;
  const SampleRowParams* params = nullptr;  // [rows]
  const int32_t* tokens = nullptr;          // prompt and output tokens of every row
  const uint32_t* masks = nullptr;          // allowed-token masks of the rows that have one
  const int32_t* bias_ids = nullptr;        // logit bias of every row
  const float* bias_values = nullptr;
  float* z = nullptr;                       // [rows, vocab] workspace: the processed logits
  int32_t* counts = nullptr;                // [rows, vocab] workspace (only read at penalised ids)
  SampleRowResult* results = nullptr;       // [rows]
};

int launch_sample(Stream s, const SampleProblem& p);

}  // namespace seatrt::cuda
