// Running built steps on the kernel table: a repeating step (a decode
// bucket) is planned once and its plan launched again for every step of
// the same shape and addresses; a one-off step is planned for one launch;
// a traced step, or a table without a planner, runs node by node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <vector>

#include "seatrt/seatrt.h"
#include "step_graph.hpp"

namespace seatrt::gemma4 {

// What makes two repeating steps the same graph: the batch's shapes, the
// addresses of its tensors and KV caches, and whether the window tables
// are used.
using StepKey = std::vector<uint64_t>;
StepKey step_key(const seatrt_forward_batch& batch, int32_t num_layers);

class StepRunner {
 public:
  // Plans kept at most (least recently used dropped first): a host has
  // one decode bucket per batch size it pads to, far fewer than this.
  static constexpr std::size_t kMaxCachedPlans = 64;

  StepRunner(const seatrt_kernel_api* k, seatrt_kernel_context* ctx) : k_(k), ctx_(ctx) {}
  ~StepRunner();
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // Launches the cached plan for `key`, building (build()) and planning it
  // first when there is none.
  void run_repeating(seatrt_stream stream, const StepKey& key,
                     const std::function<std::unique_ptr<StepGraph>()>& build);
  // Plans `step` for one launch and launches it.
  void run_once(seatrt_stream stream, std::unique_ptr<StepGraph> step);
  // Runs the nodes one by one through run(), calling at_mark (stream
  // synchronised) at each of the graph's marks.
  void run_traced(seatrt_stream stream, const StepGraph& step,
                  const std::function<void(const sdk::GraphBuilder::Mark&)>& at_mark);

  std::size_t cached_plans() const { return cache_.size(); }
  // Destroys every plan (their launches must have completed).
  void clear();

 private:
  struct Planned {
    std::unique_ptr<StepGraph> step;
    seatrt_plan* plan = nullptr;  // NULL: the table has no planner
  };
  Planned make_plan(std::unique_ptr<StepGraph> step, int32_t launches);
  void launch(seatrt_stream stream, const Planned& p);
  void destroy(Planned& p);

  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  std::list<std::pair<StepKey, Planned>> cache_;  // most recently used first
  // The last one-off step, kept until the next step: its plan may still be
  // running when run_once returns, and the host synchronises the stream
  // after each forward (it reads the logits) before the next.
  Planned one_off_;
};

// plan_describe's lines for `plan`, or a line saying why there are none.
std::vector<std::string> describe_plan(const seatrt_kernel_api* k, seatrt_kernel_context* ctx,
                                       const seatrt_plan* plan);

}  // namespace seatrt::gemma4
