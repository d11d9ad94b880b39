#include "step_runner.hpp"

#include <bit>
#include <cstring>

#include "kernel_run.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::gemma4 {

namespace {

void add_tensor(StepKey& key, const seatrt_tensor* t) {
  if (!t) {
    key.push_back(0);
    return;
  }
  key.push_back(std::bit_cast<uint64_t>(t->data));
  key.push_back(static_cast<uint64_t>(t->ndim));
  for (int32_t i = 0; i < t->ndim && i < SEATRT_MAX_DIMS; ++i) key.push_back(static_cast<uint64_t>(t->shape[i]));
}

}  // namespace

StepKey step_key(const seatrt_forward_batch& b, int32_t num_layers) {
  StepKey key;
  for (int64_t v : {int64_t{b.num_tokens}, int64_t{b.num_seqs}, int64_t{b.max_query_len}, int64_t{b.max_seq_len},
                    int64_t{b.num_logits}})
    key.push_back(static_cast<uint64_t>(v));
  for (const seatrt_tensor* t : {b.token_ids, b.positions, b.query_start, b.seq_lens, b.block_tables, b.slot_mapping,
                                 b.logits_index, static_cast<const seatrt_tensor*>(b.logits), b.window_block_tables,
                                 b.window_slot_mapping})
    add_tensor(key, t);
  for (int32_t l = 0; l < num_layers; ++l) {
    const seatrt_kv_layer& kv = b.kv_layers[l];
    add_tensor(key, &kv.k_cache);
    add_tensor(key, &kv.v_cache);
    key.push_back(static_cast<uint64_t>(kv.block_size));
    key.push_back(std::bit_cast<uint32_t>(kv.k_scale));
    key.push_back(std::bit_cast<uint32_t>(kv.v_scale));
  }
  return key;
}

StepRunner::~StepRunner() { clear(); }

void StepRunner::clear() {
  for (auto& [key, planned] : cache_) destroy(planned);
  cache_.clear();
  destroy(one_off_);
}

void StepRunner::destroy(Planned& p) {
  if (p.plan && k_->plan_destroy) k_->plan_destroy(ctx_, p.plan);
  p.plan = nullptr;
  p.step.reset();
}

StepRunner::Planned StepRunner::make_plan(std::unique_ptr<StepGraph> step, int32_t launches) {
  Planned p{std::move(step), nullptr};
  if (!k_->plan || !k_->plan_launch) return p;
  const seatrt_op_graph graph = p.step->nodes.graph(p.step->name, launches);
  seatrt_status* st = k_->plan(ctx_, &graph, &p.plan);
  const seatrt_host_api* host = sdk::host();
  if (st && host && host->status_code(st) == SEATRT_ERR_UNSUPPORTED) {
    // A node no provider plans: run() still takes each node (through the
    // table's fallback), so the step runs node by node.
    host->status_free(st);
    p.plan = nullptr;
    return p;
  }
  sdk::throw_if_error(st);
  return p;
}

void StepRunner::launch(seatrt_stream stream, const Planned& p) {
  if (p.plan)
    sdk::throw_if_error(k_->plan_launch(ctx_, stream, p.plan));
  else
    run_nodes(k_, ctx_, stream, p.step->nodes);
}

void StepRunner::run_repeating(seatrt_stream stream, const StepKey& key,
                               const std::function<std::unique_ptr<StepGraph>()>& build) {
  destroy(one_off_);
  auto it = cache_.begin();
  while (it != cache_.end() && it->first != key) ++it;
  if (it != cache_.end()) {
    cache_.splice(cache_.begin(), cache_, it);
  } else {
    Planned p = make_plan(build(), 0);
    // Every earlier launch has completed (the host synchronises after each
    // forward), so the least recently used plan may go now.
    if (cache_.size() >= kMaxCachedPlans) {
      destroy(cache_.back().second);
      cache_.pop_back();
    }
    cache_.emplace_front(key, std::move(p));
  }
  launch(stream, cache_.front().second);
}

void StepRunner::run_once(seatrt_stream stream, std::unique_ptr<StepGraph> step) {
  destroy(one_off_);
  one_off_ = make_plan(std::move(step), 1);
  launch(stream, one_off_);
}

void StepRunner::run_traced(seatrt_stream stream, const StepGraph& step,
                            const std::function<void(const sdk::GraphBuilder::Mark&)>& at_mark) {
  destroy(one_off_);
  run_nodes(k_, ctx_, stream, step.nodes, at_mark);
}

std::vector<std::string> describe_plan(const seatrt_kernel_api* k, seatrt_kernel_context* ctx,
                                       const seatrt_plan* plan) {
  if (!plan) return {"(no planner: the nodes run one by one through run())"};
  if (!k->plan_describe) return {"(the provider does not describe its plans)"};
  std::vector<std::string> lines;
  const seatrt_line_fn collect = [](void* user, const char* line) {
    static_cast<std::vector<std::string>*>(user)->emplace_back(line ? line : "");
  };
  sdk::throw_if_error(k->plan_describe(ctx, plan, collect, &lines));
  return lines;
}

}  // namespace seatrt::gemma4
