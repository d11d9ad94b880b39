// Model::forward (one step: built as a graph, planned once when its shape
// repeats) and Model::describe_steps (`seatrt check`: the step graphs at
// representative shapes and what the provider's planner makes of them).
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "emit.hpp"
#include "gemma4_model.hpp"
#include "kernel_run.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::gemma4 {

namespace {

using sdk::Error;

// The caller's batch with the fields its (older, shorter) struct lacks
// read as zero.
seatrt_forward_batch full_batch(const seatrt_forward_batch& in) {
  seatrt_forward_batch b{};
  std::memcpy(&b, &in, std::min<std::size_t>(in.struct_size, sizeof(b)));
  b.struct_size = sizeof(b);
  return b;
}

void check_batch(const seatrt_forward_batch& b, int64_t max_tokens) {
  const int64_t t = b.num_tokens;
  if (t <= 0 || t > max_tokens)
    throw Error(SEATRT_ERR_INVALID_ARG, "forward: " + std::to_string(t) + " tokens (the model was created for at most " +
                                            std::to_string(max_tokens) + ")");
  if (b.num_logits < 0 || b.num_logits > t)
    throw Error(SEATRT_ERR_INVALID_ARG, "forward: num_logits " + std::to_string(b.num_logits) + " out of range");
  if (!b.token_ids || !b.positions || !b.query_start || !b.seq_lens || !b.block_tables || !b.slot_mapping ||
      !b.kv_layers)
    throw Error(SEATRT_ERR_INVALID_ARG, "forward: a required batch tensor is NULL");
  if (b.num_logits > 0 && (!b.logits_index || !b.logits))
    throw Error(SEATRT_ERR_INVALID_ARG, "forward: num_logits > 0 without logits_index and logits");
}

// describe_steps' inputs: device memory of its own (zeroed; the graphs
// are planned, never launched, so only shapes and addresses matter) for
// up to `rows` tokens of `seqs` sequences, and a KV cache of `blocks`
// blocks per layer that every sequence's block table points into.
class DescribeInputs {
 public:
  static constexpr int32_t kBlock = 16;

  DescribeInputs(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, const std::vector<seatrt_kv_layer_spec>& specs,
                 int64_t vocab, int64_t rows, int64_t seqs, int64_t blocks)
      : k_(k), ctx_(ctx), blocks_(blocks) {
    const auto i32 = [&](int64_t n) { return tensor(SEATRT_DTYPE_I32, {n}, 4); };
    ids_ = i32(rows);
    positions_ = i32(rows);
    query_start_ = i32(seqs + 1);
    seq_lens_ = i32(seqs);
    logits_index_ = i32(seqs);
    tables_ = tensor(SEATRT_DTYPE_I32, {seqs, blocks}, 4);
    slots_ = tensor(SEATRT_DTYPE_I64, {rows}, 8);
    logits_ = tensor(SEATRT_DTYPE_F32, {seqs, vocab}, 4);
    for (const auto& spec : specs) {
      seatrt_kv_layer layer{};
      layer.struct_size = sizeof(layer);
      layer.block_size = kBlock;
      layer.k_cache = tensor(SEATRT_DTYPE_F32, {blocks, kBlock, spec.kv_heads, spec.head_dim}, 4);
      layer.v_cache = tensor(SEATRT_DTYPE_F32, {blocks, kBlock, spec.kv_heads, spec.head_dim}, 4);
      layer.k_scale = layer.v_scale = 1.0f;
      kv_.push_back(layer);
    }
    sync_stream(k_, ctx_, nullptr);
  }
  ~DescribeInputs() {
    for (void* p : memory_) k_->free_memory(ctx_, p);
  }
  DescribeInputs(const DescribeInputs&) = delete;
  DescribeInputs& operator=(const DescribeInputs&) = delete;

  // A batch of `tokens` tokens over `seqs` sequences, each of the same
  // number of new tokens; its tensors are views kept in `views`.
  seatrt_forward_batch batch(int64_t tokens, int64_t seqs, bool repeats, std::vector<seatrt_tensor>& views) {
    views.clear();
    views.reserve(8);
    const auto first = [&](const seatrt_tensor& t, int64_t n) {
      seatrt_tensor v = t;
      v.shape[0] = n;
      return &views.emplace_back(v);
    };
    seatrt_forward_batch b{};
    b.struct_size = sizeof(b);
    b.num_tokens = static_cast<int32_t>(tokens);
    b.num_seqs = static_cast<int32_t>(seqs);
    b.max_query_len = static_cast<int32_t>(tokens / seqs);
    b.max_seq_len = static_cast<int32_t>(blocks_ * kBlock);
    b.num_logits = static_cast<int32_t>(seqs);
    b.token_ids = first(ids_, tokens);
    b.positions = first(positions_, tokens);
    b.query_start = first(query_start_, seqs + 1);
    b.seq_lens = first(seq_lens_, seqs);
    b.block_tables = first(tables_, seqs);
    b.slot_mapping = first(slots_, tokens);
    b.logits_index = first(logits_index_, seqs);
    b.logits = first(logits_, seqs);
    b.kv_layers = kv_.data();
    b.shape_repeats = repeats ? 1 : 0;
    return b;
  }

 private:
  seatrt_tensor tensor(int32_t dtype, std::initializer_list<int64_t> shape, std::size_t elem) {
    std::size_t bytes = elem;
    for (int64_t d : shape) bytes *= static_cast<std::size_t>(d);
    void* p = nullptr;
    sdk::throw_if_error(k_->alloc(ctx_, std::max<std::size_t>(bytes, 1), &p));
    memory_.push_back(p);
    sdk::throw_if_error(k_->memset_zero(ctx_, nullptr, p, std::max<std::size_t>(bytes, 1)));
    return view(p, dtype, shape, k_->device_kind);
  }

  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  int64_t blocks_;
  std::vector<void*> memory_;
  seatrt_tensor ids_{}, positions_{}, query_start_{}, seq_lens_{}, logits_index_{}, tables_{}, slots_{}, logits_{};
  std::vector<seatrt_kv_layer> kv_;
};

// "  stages: embed 2, attention 30, ...": node counts by stage, in order.
std::string stage_summary(const StepGraph& step) {
  std::vector<std::pair<std::string, int>> stages;
  for (std::size_t i = 0; i < step.nodes.size(); ++i) {
    const std::string stage = node_stage(step.nodes.node_name(i));
    auto it = std::find_if(stages.begin(), stages.end(), [&](const auto& e) { return e.first == stage; });
    if (it == stages.end())
      stages.emplace_back(stage, 1);
    else
      ++it->second;
  }
  std::string line = "  stages:";
  for (const auto& [stage, n] : stages) line += " " + stage + " " + std::to_string(n) + ",";
  if (!stages.empty()) line.pop_back();
  return line;
}

// The planner's description of `step` (planned with `launches`), each line
// prefixed "  plan: ".
std::vector<std::string> plan_lines(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, StepGraph& step,
                                    const std::string& name, int32_t launches) {
  seatrt_plan* plan = nullptr;
  if (k->plan) {
    const seatrt_op_graph graph = step.nodes.graph(name, launches);
    sdk::throw_if_error(k->plan(ctx, &graph, &plan));
  }
  std::vector<std::string> lines;
  try {
    lines = describe_plan(k, ctx, plan);
  } catch (...) {
    if (plan && k->plan_destroy) k->plan_destroy(ctx, plan);
    throw;
  }
  if (plan && k->plan_destroy) k->plan_destroy(ctx, plan);
  for (auto& line : lines) line = "  plan: " + line;
  return lines;
}

}  // namespace

void Model::forward(seatrt_stream stream, const seatrt_forward_batch& in) {
  const seatrt_forward_batch b = full_batch(in);
  check_batch(b, max_tokens_);
  const StepModel m = step_model();
  if (trace_) {
    const auto step = build_step_graph(m, b);
    runner_.run_traced(stream, *step, [&](const sdk::GraphBuilder::Mark& mark) {
      trace_(trace_user_, mark.layer, mark.name.c_str(), mark.tensor);
    });
  } else if (b.shape_repeats) {
    runner_.run_repeating(stream, step_key(b, c_.num_layers), [&] { return build_step_graph(m, b); });
  } else {
    runner_.run_once(stream, build_step_graph(m, b));
  }
}

// Decode steps of 1 and max_seqs sequences and one prefill chunk (of
// max_batch_tokens or 256 tokens, the smaller), each built, planned and
// described.
void Model::describe_steps(int32_t max_seqs, const std::function<void(const std::string&)>& report) {
  const int64_t prefill = std::min<int64_t>(max_tokens_, 256);
  const int64_t seqs = std::clamp<int64_t>(max_seqs, 1, max_tokens_);
  const int64_t blocks = (prefill + DescribeInputs::kBlock - 1) / DescribeInputs::kBlock;
  DescribeInputs inputs(k_, ctx_, kv_specs_, c_.vocab_size, std::max(prefill, seqs), seqs, blocks);
  struct Shape {
    std::string name;
    int64_t tokens, seqs;
    bool decode;
  };
  std::vector<Shape> shapes{{"decode b=1", 1, 1, true}};
  if (seqs > 1) shapes.push_back({"decode b=" + std::to_string(seqs), seqs, seqs, true});
  shapes.push_back({"prefill t=" + std::to_string(prefill), prefill, 1, false});
  std::vector<seatrt_tensor> views;
  for (const Shape& s : shapes) {
    const auto step = build_step_graph(step_model(), inputs.batch(s.tokens, s.seqs, s.decode, views));
    report("graph " + s.name + ": " + std::to_string(step->nodes.size()) + " nodes");
    report(stage_summary(*step));
    for (const auto& line : plan_lines(k_, ctx_, *step, s.name, s.decode ? 0 : 1)) report(line);
  }
}

}  // namespace seatrt::gemma4
