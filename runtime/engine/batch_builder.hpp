// Turns a scheduler StepPlan into a StepBatch (token ids, positions, block
// tables, slot mappings) for the model.
#pragma once

#include "model_runner.hpp"
#include "scheduler.hpp"

namespace seatrt::engine {

StepBatch build_step_batch(const StepPlan& plan, int32_t block_size, bool has_full, bool has_window);

}  // namespace seatrt::engine
