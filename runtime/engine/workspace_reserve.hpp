// Reserving the kernel provider's working memory at load.
//
// A device provider keeps per-stream scratch memory that grows to the
// largest operation it has run (the CUDA provider's MoE at a prefill-sized
// step holds tokens * top_k * hidden floats: ~0.9 GB at 8,192 tokens for
// Gemma-4 26B-A4B).  Grown lazily, the first long prompt after the KV pool
// took the device's memory would fail mid-serving, and a buffer outgrown
// after a graph was captured stays allocated for that graph.  So, before
// the seat is ready, the runner runs the worst steps the scheduler can
// form, on the stream it serves from:
// - a prefill of max_num_batched_tokens tokens (one sequence, or several
//   of max_model_len; every activation-sized buffer grows with the step's
//   token count);
// - a decode step of max_num_seqs sequences with block tables as wide as
//   max_model_len (the split-key attention workspace grows with the width);
// - the sampling op over those rows with every option that takes memory
//   (penalties over max_model_len prompt tokens, an allowed-token mask,
//   20 top logprobs).
// The device memory the steps leave allocated is measured, not estimated.
// The steps write K/V into blocks the engine has not handed out yet; every
// slot a later sequence reads is written by that sequence first, so nothing
// of them is ever read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "kv_plan.hpp"
#include "model_runner.hpp"

namespace seatrt::engine {

struct WorkspaceReserveLimits {
  int64_t max_num_batched_tokens = 0;
  int32_t max_num_seqs = 1;
  int64_t max_model_len = 0;
  int64_t table_width = 0;  // block-table columns the runner stages (AbiModelRunner::max_blocks)
  int32_t vocab_size = 0;
};

struct WorkspaceReservation {
  int64_t prefill_tokens = 0;  // tokens of the prefill step run
  int32_t decode_seqs = 0;     // rows of the decode step run
  int64_t table_width = 0;     // its block-table width
  bool sampled = false;        // the runner sampled on its device
  uint64_t bytes = 0;          // device memory the steps left allocated
  uint64_t free_after = 0;     // free_bytes() after them
  double ms = 0;               // wall time of the three steps
};

// The step batches reserve_workspace runs, for `plan`'s pools.  The prefill
// is clamped to the blocks of the smaller pool and to max_num_seqs
// sequences, the decode step to one block per sequence in each pool (a plan
// made for the scheduler's limits holds both; a clamp shows in the result's
// prefill_tokens and decode_seqs).
StepBatch reserve_prefill_batch(const KvPlan& plan, const WorkspaceReserveLimits& limits);
StepBatch reserve_decode_batch(const KvPlan& plan, const WorkspaceReserveLimits& limits);

// Runs the three steps on `runner` and measures the device memory they
// leave allocated as free_bytes() before minus after.  Throws
// std::runtime_error naming the step that failed and, when the provider ran
// out of memory, what to lower.
WorkspaceReservation reserve_workspace(ModelRunner& runner, const KvPlan& plan, const WorkspaceReserveLimits& limits,
                                       const std::function<uint64_t()>& free_bytes);

// "kernel provider workspace N bytes (X GiB), reserved by a prefill of T
// tokens, a decode step of S sequences and sampling, in M ms".
std::string describe(const WorkspaceReservation& r);

}  // namespace seatrt::engine
