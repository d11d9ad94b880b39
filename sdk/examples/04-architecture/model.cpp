#include "model.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "seatrt/cpp/plugin.hpp"
#include "seatrt/cpp/tensor.hpp"

namespace tinydense {

using seatrt::sdk::Error;
using seatrt::sdk::throw_if_error;

std::string layer_prefix(int32_t layer) { return "model.layers." + std::to_string(layer) + "."; }

namespace {

// A repeating step's identity: its launch shapes and every input address
// (the host promises both repeat while shape_repeats is set).
std::vector<int64_t> step_key(const seatrt_forward_batch& b) {
  std::vector<int64_t> key{b.num_tokens, b.num_seqs, b.max_query_len, b.max_seq_len, b.num_logits,
                           b.block_tables->shape[1]};
  for (const seatrt_tensor* t : {b.token_ids, b.positions, b.query_start, b.seq_lens, b.block_tables,
                                 b.slot_mapping, b.logits_index, static_cast<const seatrt_tensor*>(b.logits)})
    key.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(t->data)));
  key.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(b.kv_layers[0].k_cache.data)));
  return key;
}

// A plan outlives no more than this many distinct repeating steps; past it
// the cache starts over (a host with more buckets re-plans).
constexpr std::size_t kMaxPlans = 64;

}  // namespace

seatrt_kv_layer_spec Model::kv_spec(const Config& c) {
  seatrt_kv_layer_spec s{};
  s.struct_size = sizeof(s);
  s.kv_heads = c.num_kv_heads;
  s.head_dim = c.head_dim;
  return s;
}

seatrt_model_info Model::shape_info(const Config& c) {
  seatrt_model_info i{};
  i.struct_size = sizeof(i);
  i.vocab_size = c.vocab_size;
  i.hidden_size = c.hidden_size;
  i.num_layers = c.num_layers;
  i.max_position = c.max_position;
  return i;
}

Model::Model(const seatrt_model_source* src, Config config)
    : src_(src), k_(src->kernels), ctx_(src->kernel_context), max_tokens_(src->max_batch_tokens) {
  if (!k_ || !ctx_) throw Error(SEATRT_ERR_INVALID_ARG, "create(): the model source has no kernel table");
  if (max_tokens_ <= 0) throw Error(SEATRT_ERR_INVALID_ARG, "create(): max_batch_tokens must be positive");
  parts_.config = config;
  parts_.device_kind = k_->device_kind;
  try {
    load_weights();
    allocate_workspaces();
  } catch (...) {
    for (void* p : allocations_) k_->free_memory(ctx_, p);
    throw;
  }
  kv_specs_.assign(static_cast<std::size_t>(config.num_layers), kv_spec(config));
  info_ = shape_info(config);
  info_.kv_layers = kv_specs_.data();
}

Model::~Model() {
  // The host destroys a model only after its work completed: no sync here
  // (the streams of past launches may be gone).
  for (auto& [key, step] : repeating_) {
    if (step->plan) k_->plan_destroy(ctx_, step->plan);
  }
  for (void* p : allocations_) k_->free_memory(ctx_, p);
}

float* Model::allocate_f32(std::size_t count) {
  void* p = nullptr;
  throw_if_error(k_->alloc(ctx_, std::max<std::size_t>(count, 1) * sizeof(float), &p));
  allocations_.push_back(p);
  return static_cast<float*>(p);
}

seatrt_tensor Model::load_tensor(const std::string& name) {
  seatrt_tensor t{};
  t.struct_size = sizeof(t);
  throw_if_error(src_->load_tensor(src_, name.c_str(), SEATRT_DTYPE_F32, &t));
  return t;
}

void Model::load_weights() {
  const Config& c = parts_.config;
  const auto linear = [&](const std::string& module) {
    const seatrt_linear_weight* w = nullptr;
    throw_if_error(src_->load_linear(src_, module.c_str(), &w));
    info_.weight_bytes += static_cast<uint64_t>(w->out_features * w->in_features) * sizeof(float);
    return w;
  };
  parts_.embedding = load_tensor(std::string(kEmbedding) + ".weight");
  parts_.final_norm = load_tensor(kFinalNorm);
  parts_.lm_head = linear(kEmbedding);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const std::string p = layer_prefix(l);
    LayerWeights w{};
    w.input_norm = load_tensor(p + "input_layernorm.weight");
    w.post_attention_norm = load_tensor(p + "post_attention_layernorm.weight");
    w.q_bias = load_tensor(p + "self_attn.q_proj.bias");
    w.k_bias = load_tensor(p + "self_attn.k_proj.bias");
    w.v_bias = load_tensor(p + "self_attn.v_proj.bias");
    w.q = linear(p + "self_attn.q_proj");
    w.k = linear(p + "self_attn.k_proj");
    w.v = linear(p + "self_attn.v_proj");
    w.o = linear(p + "self_attn.o_proj");
    w.gate = linear(p + "mlp.gate_proj");
    w.up = linear(p + "mlp.up_proj");
    w.down = linear(p + "mlp.down_proj");
    parts_.layers.push_back(w);
  }
  // RoPE frequencies theta^(-2i/D), computed here in double once.
  const int32_t half = c.head_dim / 2;
  std::vector<float> inv_freq(static_cast<std::size_t>(half));
  for (int32_t i = 0; i < half; ++i)
    inv_freq[static_cast<std::size_t>(i)] =
        static_cast<float>(std::pow(static_cast<double>(c.rope_theta), -2.0 * i / c.head_dim));
  float* device = allocate_f32(inv_freq.size());
  throw_if_error(k_->copy(ctx_, nullptr, device, k_->device_kind, inv_freq.data(), SEATRT_DEVICE_CPU,
                          inv_freq.size() * sizeof(float)));
  throw_if_error(k_->stream_sync(ctx_, nullptr));  // inv_freq is a local
  parts_.inv_freq = seatrt::sdk::contiguous_tensor(device, SEATRT_DTYPE_F32, {half}, k_->device_kind);
}

void Model::allocate_workspaces() {
  const Config& c = parts_.config;
  const auto rows = static_cast<std::size_t>(max_tokens_);
  const auto h = static_cast<std::size_t>(c.hidden_size);
  const auto q_cols = static_cast<std::size_t>(c.num_heads * c.head_dim);
  const auto kv_cols = static_cast<std::size_t>(c.num_kv_heads * c.head_dim);
  const auto inter = static_cast<std::size_t>(c.intermediate_size);
  parts_.residual = allocate_f32(rows * h);
  parts_.normed = allocate_f32(rows * h);
  parts_.q = allocate_f32(rows * q_cols);
  parts_.k = allocate_f32(rows * kv_cols);
  parts_.v = allocate_f32(rows * kv_cols);
  parts_.attn = allocate_f32(rows * q_cols);
  parts_.gate = allocate_f32(rows * inter);
  parts_.up = allocate_f32(rows * inter);
  parts_.picked = allocate_f32(rows * h);
  info_.workspace_bytes = rows * (4 * h + 2 * q_cols + 2 * kv_cols + 2 * inter) * sizeof(float);
}

void Model::forward(seatrt_stream stream, const seatrt_forward_batch& b) {
  if (b.num_tokens <= 0 || b.num_tokens > max_tokens_)
    throw Error(SEATRT_ERR_INVALID_ARG, "forward: num_tokens " + std::to_string(b.num_tokens) +
                                            " is outside 1.." + std::to_string(max_tokens_));
  const bool repeats =
      b.struct_size >= offsetof(seatrt_forward_batch, shape_repeats) + sizeof(b.shape_repeats) && b.shape_repeats;
  if (!repeats) {
    Step step;
    build_step(parts_, b, step);
    try {
      launch(stream, step);
    } catch (...) {
      release_step(step);
      throw;
    }
    release_step(step);
    return;
  }
  auto key = step_key(b);
  auto it = repeating_.find(key);
  if (it == repeating_.end()) {
    if (repeating_.size() >= kMaxPlans) {
      for (auto& [old_key, old_step] : repeating_) release_step(*old_step);
      repeating_.clear();
    }
    auto step = std::make_unique<Step>();
    step->repeats = true;
    build_step(parts_, b, *step);
    it = repeating_.emplace(std::move(key), std::move(step)).first;
  }
  launch(stream, *it->second);
}

// Plans the step on first use (once for a one-off step, to be kept for a
// repeating one) and launches it.  Without a planner, or when the planner
// refuses a node, the nodes run one by one, in order: the same results.
void Model::launch(seatrt_stream stream, Step& step) {
  if (!step.plan && !step.eager) {
    step.eager = !k_->plan;
    if (k_->plan) {
      const seatrt_op_graph g = step.graph.graph(step.repeats ? "tinydense decode" : "tinydense prefill",
                                                 step.repeats ? 0 : 1);
      seatrt_status* s = k_->plan(ctx_, &g, &step.plan);
      if (s && seatrt::sdk::host()->status_code(s) == SEATRT_ERR_UNSUPPORTED) {
        seatrt::sdk::host()->status_free(s);
        step.eager = true;
      } else {
        throw_if_error(s);
      }
    }
  }
  step.stream = stream;
  if (step.eager) {
    for (const seatrt_op& op : step.graph.nodes()) throw_if_error(k_->run(ctx_, stream, &op));
    return;
  }
  throw_if_error(k_->plan_launch(ctx_, stream, step.plan));
}

void Model::release_step(Step& step) {
  if (!step.plan) return;
  // A plan may be freed only after its launches completed.
  seatrt_status* s = k_->stream_sync(ctx_, step.stream);
  if (s) seatrt::sdk::host()->status_free(s);
  k_->plan_destroy(ctx_, step.plan);
  step.plan = nullptr;
}

}  // namespace tinydense
