// Runs prompts through the server's engine (Engine + AbiModelRunner) on an
// already loaded model: all prompts submitted at once (batched decode),
// greedy, each to `new_tokens` tokens.  Shared by the CPU engine-vs-HF test
// (tests/model) and the CUDA one (tests/cuda).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/kv_plan.hpp"
#include "seatrt/model/model_loader.hpp"

namespace seatrt::test {

struct EngineRun {
  std::vector<std::vector<int32_t>> tokens;   // per prompt
  std::vector<std::vector<float>> logprobs;   // per prompt, per token
  std::vector<std::string> errors;            // per prompt: the finish error, if any
  int64_t repeating_steps = 0;   // steps run with shape_repeats = 1
  int64_t repeating_shapes = 0;  // distinct such shapes
};

// max_model_len 256, block size 16, a KV pool of 4x max context.
// repeat_decode: decode steps padded to repeating shapes (shape_repeats).
EngineRun run_engine_greedy(const model::LoadedModel& loaded, const std::vector<std::vector<int32_t>>& prompts,
                            int32_t new_tokens, engine::KvDtype kv_dtype, bool repeat_decode);

}  // namespace seatrt::test
