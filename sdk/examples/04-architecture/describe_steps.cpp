// describe_steps (`seatrt check`): the model's step graphs at representative
// shapes, planned by the kernel table but never launched, and reported.
#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "model.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "seatrt/cpp/tensor.hpp"

namespace tinydense {

namespace {

constexpr int32_t kBlockSize = 16;

// "layer 3" of "layer 3/attention/q_proj": the stage a node belongs to.
std::string stage_of(const std::string& node) { return node.substr(0, node.find('/')); }

}  // namespace

// Inputs of one shape, allocated on the device (uninitialised: planning
// reads shapes and addresses, not contents), and the batch over them.
struct Model::ShapeInputs {
  std::vector<seatrt_tensor> tensors;
  std::vector<seatrt_kv_layer> caches;
  seatrt_forward_batch batch{};
};

void Model::make_inputs(int32_t seqs, int32_t tokens_per_seq, ShapeInputs& in) {
  const Config& c = parts_.config;
  const int32_t t = seqs * tokens_per_seq;
  const auto device = [&](int32_t dtype, std::initializer_list<int64_t> shape, std::size_t elem) {
    std::size_t n = 1;
    for (int64_t d : shape) n *= static_cast<std::size_t>(d);
    void* p = allocate_f32((n * elem + 3) / 4);
    return seatrt::sdk::contiguous_tensor(p, dtype, shape, k_->device_kind);
  };
  in.tensors = {device(SEATRT_DTYPE_I32, {t}, 4),         device(SEATRT_DTYPE_I32, {t}, 4),
                device(SEATRT_DTYPE_I32, {seqs + 1}, 4),  device(SEATRT_DTYPE_I32, {seqs}, 4),
                device(SEATRT_DTYPE_I32, {seqs, 1}, 4),   device(SEATRT_DTYPE_I64, {t}, 8),
                device(SEATRT_DTYPE_I32, {seqs}, 4),      device(SEATRT_DTYPE_F32, {seqs, c.vocab_size}, 4)};
  // One block per sequence, shared by every layer: enough to plan with.
  seatrt_kv_layer kv{};
  kv.struct_size = sizeof(kv);
  kv.block_size = kBlockSize;
  kv.k_cache = device(SEATRT_DTYPE_F32, {seqs, kBlockSize, c.num_kv_heads, c.head_dim}, 4);
  kv.v_cache = device(SEATRT_DTYPE_F32, {seqs, kBlockSize, c.num_kv_heads, c.head_dim}, 4);
  kv.k_scale = kv.v_scale = 1.0f;
  in.caches.assign(static_cast<std::size_t>(c.num_layers), kv);
  seatrt_forward_batch& b = in.batch;
  b.struct_size = sizeof(b);
  b.num_tokens = t;
  b.num_seqs = seqs;
  b.max_query_len = tokens_per_seq;
  b.max_seq_len = kBlockSize;
  b.num_logits = seqs;
  b.token_ids = &in.tensors[0];
  b.positions = &in.tensors[1];
  b.query_start = &in.tensors[2];
  b.seq_lens = &in.tensors[3];
  b.block_tables = &in.tensors[4];
  b.slot_mapping = &in.tensors[5];
  b.logits_index = &in.tensors[6];
  b.logits = &in.tensors[7];
  b.kv_layers = in.caches.data();
  b.shape_repeats = tokens_per_seq == 1;
}

void Model::describe_steps(int32_t max_seqs, const std::function<void(const std::string&)>& report) {
  const std::size_t allocated = allocations_.size();
  struct Shape {
    const char* name;
    int32_t seqs, tokens_per_seq;
  };
  const int32_t wide = std::max(1, std::min<int32_t>(max_seqs, static_cast<int32_t>(max_tokens_)));
  const int32_t chunk = static_cast<int32_t>(std::min<int64_t>(max_tokens_, kBlockSize));
  try {
    for (const Shape& s : {Shape{"decode", 1, 1}, Shape{"decode", wide, 1}, Shape{"prefill", 1, chunk}}) {
      ShapeInputs in;
      make_inputs(s.seqs, s.tokens_per_seq, in);
      Step step;
      step.repeats = in.batch.shape_repeats != 0;
      build_step(parts_, in.batch, step);
      std::map<std::string, int> per_stage;
      std::vector<std::string> order;
      for (std::size_t i = 0; i < step.graph.size(); ++i)
        if (per_stage[stage_of(step.graph.node_name(i))]++ == 0) order.push_back(stage_of(step.graph.node_name(i)));
      report(std::string("graph ") + s.name + " seqs=" + std::to_string(s.seqs) + " tokens=" +
             std::to_string(in.batch.num_tokens) + ": " + std::to_string(step.graph.size()) + " nodes");
      std::string stages = "stages:";
      for (const auto& name : order) stages += " " + name + " " + std::to_string(per_stage[name]) + ",";
      stages.pop_back();
      report(stages);
      describe_plan(step, report);
    }
  } catch (...) {
    free_since(allocated);
    throw;
  }
  free_since(allocated);
}

// Plans `step` and reports what the plan runs; without a planner (or when
// it refuses a node) the nodes would run one by one.
void Model::describe_plan(Step& step, const std::function<void(const std::string&)>& report) {
  if (!k_->plan) return report("plan: none (the provider has no planner; nodes run in order)");
  const seatrt_op_graph g = step.graph.graph("tinydense describe", step.repeats ? 0 : 1);
  seatrt_status* s = k_->plan(ctx_, &g, &step.plan);
  if (s) {
    report(std::string("plan: refused (") + seatrt::sdk::host()->status_message(s) + "); nodes run in order");
    seatrt::sdk::host()->status_free(s);
    return;
  }
  if (k_->plan_describe) {
    std::function<void(const std::string&)> sink = report;
    const auto line = [](void* user, const char* text) {
      (*static_cast<std::function<void(const std::string&)>*>(user))(std::string("plan: ") + text);
    };
    seatrt_status* d = k_->plan_describe(ctx_, step.plan, line, &sink);
    if (d) seatrt::sdk::host()->status_free(d);
  }
  k_->plan_destroy(ctx_, step.plan);  // never launched
  step.plan = nullptr;
}

void Model::free_since(std::size_t count) {
  for (std::size_t i = count; i < allocations_.size(); ++i) k_->free_memory(ctx_, allocations_[i]);
  allocations_.resize(count);
}

}  // namespace tinydense
