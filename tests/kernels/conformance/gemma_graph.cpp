#include "gemma_graph.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace seatrt::conformance::gemma {
namespace {

using test::Tensor;

constexpr float kEps = 1e-6f;
constexpr float kFinalSoftcap = 30.0f;

// A gain as checkpoints hold it (BF16, around 1).
Tensor gain(std::mt19937& rng, int64_t n) { return test::random_tensor(rng, SEATRT_DTYPE_BF16, {n}, 0.5, 1.5); }

// NeoX frequencies over head_dim 16: sliding layers rotate every pair
// (theta 1e4), full layers the first half (theta 1e6; proportional RoPE).
Tensor inv_freq(bool full) {
  Tensor f(SEATRT_DTYPE_F32, {kHeadDim / 2});
  for (int64_t i = 0; i < kHeadDim / 2; ++i) {
    const double base = full ? 1e6 : 1e4;
    const bool rotated = !full || i < kHeadDim / 4;
    f.set(i, rotated ? std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(kHeadDim)) : 0.0);
  }
  return f;
}

HostLayer make_layer(std::mt19937& rng, const LayerSpec& spec, int64_t num_blocks) {
  HostLayer l;
  l.q = gemma_nvfp4(rng, kQHeads * kHeadDim, kHidden);
  l.k = gemma_nvfp4(rng, kKvHeads * kHeadDim, kHidden);
  if (!spec.k_eq_v) l.v = gemma_nvfp4(rng, kKvHeads * kHeadDim, kHidden);
  l.o = gemma_nvfp4(rng, kHidden, kQHeads * kHeadDim);
  l.gate = gemma_nvfp4(rng, kInter, kHidden);
  l.up = gemma_nvfp4(rng, kInter, kHidden);
  l.down = gemma_nvfp4(rng, kHidden, kInter);
  for (int64_t e = 0; e < kExperts; ++e) {
    l.expert_gate.push_back(gemma_nvfp4(rng, kInter, kHidden));
    l.expert_up.push_back(gemma_nvfp4(rng, kInter, kHidden));
    l.expert_down.push_back(gemma_nvfp4(rng, kHidden, kInter));
  }
  l.router = test::random_dense(rng, SEATRT_DTYPE_BF16, kExperts, kHidden, 0.5);
  for (Tensor* t : {&l.input_norm, &l.post_attn, &l.pre_ff, &l.post_ff_1, &l.router_in, &l.pre_ff_2, &l.post_ff_2,
                    &l.post_ff})
    *t = gain(rng, kHidden);
  l.q_norm = gain(rng, kHeadDim);
  l.k_norm = gain(rng, kHeadDim);
  l.per_expert_scale = test::random_tensor(rng, SEATRT_DTYPE_F32, {kExperts}, 0.5, 2.0);
  l.inv_freq = inv_freq(spec.window == 0);
  l.k_cache = random_input(rng, SEATRT_DTYPE_BF16, {num_blocks, kBlock, kKvHeads, kHeadDim});
  if (!spec.k_eq_v) l.v_cache = random_input(rng, SEATRT_DTYPE_BF16, {num_blocks, kBlock, kKvHeads, kHeadDim});
  return l;
}

// A contiguous descriptor of `t`'s memory with another shape (same count).
seatrt_tensor reshaped(const seatrt_tensor& t, const std::vector<int64_t>& shape) {
  seatrt_tensor v = t;
  v.ndim = static_cast<int32_t>(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    v.shape[i] = shape[i];
    v.strides[i] = stride;
    stride *= shape[i];
  }
  return v;
}

}  // namespace

HostModel make_host_model(std::mt19937& rng, const std::vector<LayerSpec>& specs, int64_t num_blocks) {
  HostModel m;
  m.specs = specs;
  m.num_blocks = num_blocks;
  m.embed = random_input(rng, SEATRT_DTYPE_BF16, {kVocab, kHidden});
  m.final_norm = gain(rng, kHidden);
  m.lm_head = test::random_dense(rng, SEATRT_DTYPE_BF16, kVocab, kHidden, 0.3);
  for (const LayerSpec& s : specs) m.layers.push_back(make_layer(rng, s, num_blocks));
  return m;
}

int64_t blocks_needed(const StepPlan& plan) {
  int64_t blocks = 0;
  for (size_t s = 0; s < plan.cached.front().size(); ++s) {
    const int64_t len = plan.cached.back()[s] + plan.rows.back()[s];
    blocks += (len + kBlock - 1) / kBlock;
  }
  return blocks + 3;
}

std::vector<StepInputs> make_steps(std::mt19937& rng, const StepPlan& plan, int64_t num_blocks) {
  const size_t seqs = plan.cached.front().size();
  // The last step is the longest: it fixes each sequence's blocks.
  std::vector<int64_t> owned(seqs);
  int64_t width = 0;
  for (size_t s = 0; s < seqs; ++s) {
    owned[s] = (plan.cached.back()[s] + plan.rows.back()[s] + kBlock - 1) / kBlock;
    width = std::max(width, owned[s]);
  }
  std::vector<int64_t> pool(static_cast<size_t>(num_blocks));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::vector<int64_t> tables(seqs * static_cast<size_t>(width), 0);
  size_t next = 0;
  for (size_t s = 0; s < seqs; ++s)
    for (int64_t i = 0; i < owned[s]; ++i) tables[s * static_cast<size_t>(width) + static_cast<size_t>(i)] = pool[next++];

  std::vector<StepInputs> steps;
  for (size_t step = 0; step < plan.rows.size(); ++step) {
    std::vector<int64_t> ids, positions, slots, starts = {0}, lens, last;
    for (size_t s = 0; s < seqs; ++s) {
      const int64_t cached = plan.cached[step][s], rows = plan.rows[step][s];
      for (int64_t pos = cached; pos < cached + rows; ++pos) {
        ids.push_back(static_cast<int64_t>(rng() % kVocab));
        positions.push_back(pos);
        slots.push_back(tables[s * static_cast<size_t>(width) + static_cast<size_t>(pos / kBlock)] * kBlock + pos % kBlock);
      }
      starts.push_back(starts.back() + rows);
      lens.push_back(cached + rows);
      last.push_back(starts.back() - 1);
    }
    const auto t = static_cast<int64_t>(ids.size()), n = static_cast<int64_t>(seqs);
    steps.push_back({int_input(SEATRT_DTYPE_I32, {t}, ids), int_input(SEATRT_DTYPE_I32, {t}, positions),
                     int_input(SEATRT_DTYPE_I64, {t}, slots), int_input(SEATRT_DTYPE_I32, {n + 1}, starts),
                     int_input(SEATRT_DTYPE_I32, {n}, lens), int_input(SEATRT_DTYPE_I32, {n, width}, tables),
                     int_input(SEATRT_DTYPE_I32, {n}, last)});
  }
  return steps;
}

// A layer's weights, gains and cache on the device.
struct DeviceModel::Layer {
  std::unique_ptr<DeviceWeight> q, k, v, o, gate, up, down, router;
  std::vector<std::unique_ptr<DeviceWeight>> experts;
  std::vector<seatrt_linear_weight> expert_gate, expert_up, expert_down;  // the arrays moe reads
  DeviceTensor input_norm, q_norm, k_norm, post_attn, pre_ff, post_ff_1, router_in, pre_ff_2, post_ff_2, post_ff;
  DeviceTensor per_expert_scale, inv_freq, k_cache, v_cache, ids, weights;
  seatrt_kv_layer cache{};
};

DeviceModel::DeviceModel(Provider& p, const HostModel& host, const StepInputs& first)
    : p_(p), host_(host), tokens_(first.token_ids.numel()), seqs_(first.seq_lens.numel()), outs_(first.logits_index.numel()) {
  for (size_t l = 0; l < host.layers.size(); ++l) {
    const HostLayer& h = host.layers[l];
    auto d = std::make_unique<Layer>();
    d->q = upload(p, h.q);
    d->k = upload(p, h.k);
    if (!host.specs[l].k_eq_v) d->v = upload(p, h.v);
    d->o = upload(p, h.o);
    d->gate = upload(p, h.gate);
    d->up = upload(p, h.up);
    d->down = upload(p, h.down);
    d->router = upload(p, h.router);
    for (int64_t e = 0; e < kExperts; ++e) {
      const auto i = static_cast<size_t>(e);
      for (const test::Nvfp4Weight* w : {&h.expert_gate[i], &h.expert_up[i], &h.expert_down[i]}) d->experts.push_back(upload(p, *w));
      d->expert_gate.push_back(d->experts[3 * i]->get());
      d->expert_up.push_back(d->experts[3 * i + 1]->get());
      d->expert_down.push_back(d->experts[3 * i + 2]->get());
    }
    d->input_norm = DeviceTensor(p, h.input_norm);
    d->q_norm = DeviceTensor(p, h.q_norm);
    d->k_norm = DeviceTensor(p, h.k_norm);
    d->post_attn = DeviceTensor(p, h.post_attn);
    d->pre_ff = DeviceTensor(p, h.pre_ff);
    d->post_ff_1 = DeviceTensor(p, h.post_ff_1);
    d->router_in = DeviceTensor(p, h.router_in);
    d->pre_ff_2 = DeviceTensor(p, h.pre_ff_2);
    d->post_ff_2 = DeviceTensor(p, h.post_ff_2);
    d->post_ff = DeviceTensor(p, h.post_ff);
    d->per_expert_scale = DeviceTensor(p, h.per_expert_scale);
    d->inv_freq = DeviceTensor(p, h.inv_freq);
    d->k_cache = DeviceTensor(p, h.k_cache);
    d->cache.struct_size = sizeof d->cache;
    d->cache.block_size = static_cast<int32_t>(kBlock);
    d->cache.k_cache = *d->k_cache.get();
    if (!host.specs[l].k_eq_v) {
      d->v_cache = DeviceTensor(p, h.v_cache);
      d->cache.v_cache = *d->v_cache.get();
    }
    d->cache.k_scale = d->cache.v_scale = 1.0f;
    d->ids = DeviceTensor(p, Tensor(SEATRT_DTYPE_I32, {tokens_, kTopK}));
    d->weights = DeviceTensor(p, Tensor(SEATRT_DTYPE_F32, {tokens_, kTopK}));
    layers_.push_back(std::move(d));
  }
  embed_ = DeviceTensor(p, host.embed);
  final_norm_ = DeviceTensor(p, host.final_norm);
  lm_head_ = upload(p, host.lm_head);
  token_ids_ = DeviceTensor(p, first.token_ids);
  positions_ = DeviceTensor(p, first.positions);
  slots_ = DeviceTensor(p, first.slots);
  query_start_ = DeviceTensor(p, first.query_start);
  seq_lens_ = DeviceTensor(p, first.seq_lens);
  block_tables_ = DeviceTensor(p, first.block_tables);
  logits_index_ = DeviceTensor(p, first.logits_index);
  Tensor starts = first.query_start;
  for (int64_t s = 0; s < seqs_; ++s)
    max_query_len_ = std::max(max_query_len_, starts.as<int32_t>()[s + 1] - starts.as<int32_t>()[s]);
  // Any length up to the block tables' capacity: the same plan serves later steps.
  max_seq_len_ = static_cast<int32_t>(first.block_tables.desc().shape[1] * kBlock);
  const auto f32 = [&](std::vector<int64_t> shape) { return DeviceTensor(p, Tensor(SEATRT_DTYPE_F32, std::move(shape))); };
  h_ = f32({tokens_, kHidden});
  x_ = f32({tokens_, kHidden});
  q_ = f32({tokens_, kQHeads * kHeadDim});
  k_ = f32({tokens_, kKvHeads * kHeadDim});
  v_ = f32({tokens_, kKvHeads * kHeadDim});
  attn_ = f32({tokens_, kQHeads * kHeadDim});
  branch_ = f32({tokens_, kHidden});
  gate_ = f32({tokens_, kInter});
  up_ = f32({tokens_, kInter});
  act_ = f32({tokens_, kInter});
  m1_ = f32({tokens_, kHidden});
  r_ = f32({tokens_, kHidden});
  ein_ = f32({tokens_, kHidden});
  router_logits_ = f32({tokens_, kExperts});
  eout_ = f32({tokens_, kHidden});
  rows_ = f32({outs_, kHidden});
  logits_ = f32({outs_, kVocab});
}

DeviceModel::~DeviceModel() = default;

void DeviceModel::set_inputs(const StepInputs& in) {
  token_ids_.upload(in.token_ids);
  positions_.upload(in.positions);
  slots_.upload(in.slots);
  query_start_.upload(in.query_start);
  seq_lens_.upload(in.seq_lens);
  block_tables_.upload(in.block_tables);
  logits_index_.upload(in.logits_index);
}

seatrt_tensor* DeviceModel::view(sdk::GraphBuilder& b, DeviceTensor& t, std::vector<int64_t> shape) {
  return b.tensor(reshaped(*t.get(), shape));
}

void DeviceModel::build(sdk::GraphBuilder& b) {
  seatrt_tensor* h = b.tensor(*h_.get());
  b.add<SEATRT_OP_EMBEDDING>({0, b.tensor(*token_ids_.get()), b.tensor(*embed_.get()), std::sqrt(static_cast<float>(kHidden)), h},
                             "embed");
  b.mark(-1, "hidden", h);
  b.add<SEATRT_OP_RMS_NORM>({0, h, b.tensor(*layers_[0]->input_norm.get()), kEps, b.tensor(*x_.get()), 0.0f},
                            "layer 0/input_norm");
  for (size_t l = 0; l < layers_.size(); ++l) {
    build_attention(b, l);
    build_ffn(b, l);
  }
  seatrt_tensor* rows = b.tensor(*rows_.get());
  seatrt_tensor* logits = b.tensor(*logits_.get());
  b.add<SEATRT_OP_GATHER_ROWS>({0, b.tensor(*x_.get()), b.tensor(*logits_index_.get()), rows}, "head/gather");
  b.add<SEATRT_OP_LINEAR>({0, rows, &lm_head_->get(), logits, nullptr}, "head/lm_head");
  b.add<SEATRT_OP_ELEMENTWISE>({0, SEATRT_EW_SOFTCAP, logits, nullptr, kFinalSoftcap, logits}, "head/softcap");
}

// Steps 1-5 of the layer: projections, q/k/v norms and RoPE, the cache
// store, attention, o_proj, its post-norm and residual, the FFN's pre-norm.
void DeviceModel::build_attention(sdk::GraphBuilder& b, size_t l) {
  Layer& d = *layers_[l];
  const LayerSpec& spec = host_.specs[l];
  const std::string n = std::to_string(l) + "/";
  seatrt_tensor* x = b.tensor(*x_.get());
  seatrt_tensor* h = b.tensor(*h_.get());
  b.add<SEATRT_OP_LINEAR>({0, x, &d.q->get(), b.tensor(*q_.get()), nullptr}, n + "attn/q_proj");
  b.add<SEATRT_OP_LINEAR>({0, x, &d.k->get(), b.tensor(*k_.get()), nullptr}, n + "attn/k_proj");
  if (!spec.k_eq_v) b.add<SEATRT_OP_LINEAR>({0, x, &d.v->get(), b.tensor(*v_.get()), nullptr}, n + "attn/v_proj");

  seatrt_tensor* q3 = view(b, q_, {tokens_, kQHeads, kHeadDim});
  seatrt_tensor* k3 = view(b, k_, {tokens_, kKvHeads, kHeadDim});
  seatrt_tensor* v3 = view(b, v_, {tokens_, kKvHeads, kHeadDim});
  seatrt_tensor* positions = b.tensor(*positions_.get());
  seatrt_tensor* freq = b.tensor(*d.inv_freq.get());
  b.add<SEATRT_OP_RMS_NORM>({0, q3, b.tensor(*d.q_norm.get()), kEps, q3, 0.0f}, n + "attn/q_norm");
  b.add<SEATRT_OP_ROPE>({0, q3, positions, freq, q3, 0, {}}, n + "attn/q_rope");
  // v = the weightless norm of the raw v (or, without v_proj, of the raw k).
  b.add<SEATRT_OP_RMS_NORM>({0, spec.k_eq_v ? k3 : v3, nullptr, kEps, v3, 0.0f}, n + "attn/v_norm");
  b.add<SEATRT_OP_RMS_NORM>({0, k3, b.tensor(*d.k_norm.get()), kEps, k3, 0.0f}, n + "attn/k_norm");
  b.add<SEATRT_OP_ROPE>({0, k3, positions, freq, k3, 0, {}}, n + "attn/k_rope");
  const bool has_v_cache = d.cache.v_cache.data != nullptr;
  b.add<SEATRT_OP_KV_STORE>({0, k3, has_v_cache ? v3 : nullptr, b.tensor(*slots_.get()), &d.cache}, n + "attn/kv_store");

  seatrt_attention_args attention{};
  attention.q = q3;
  attention.cache = &d.cache;
  attention.query_start = b.tensor(*query_start_.get());
  attention.seq_lens = b.tensor(*seq_lens_.get());
  attention.block_tables = b.tensor(*block_tables_.get());
  attention.num_seqs = static_cast<int32_t>(seqs_);
  attention.max_query_len = max_query_len_;
  attention.max_seq_len = max_seq_len_;
  attention.window = spec.window;
  attention.scale = 1.0f;  // Gemma-4: q and k are normed instead
  attention.out = view(b, attn_, {tokens_, kQHeads, kHeadDim});
  b.add<SEATRT_OP_ATTENTION>(attention, n + "attn/attention");

  seatrt_tensor* branch = b.tensor(*branch_.get());
  b.add<SEATRT_OP_LINEAR>({0, b.tensor(*attn_.get()), &d.o->get(), branch, nullptr}, n + "attn/o_proj");
  b.add<SEATRT_OP_RMS_NORM>({0, branch, b.tensor(*d.post_attn.get()), kEps, branch, 0.0f}, n + "attn/post_norm");
  b.add<SEATRT_OP_ELEMENTWISE>({0, SEATRT_EW_ADD, h, branch, 0.0f, h}, n + "attn/residual");
  b.add<SEATRT_OP_RMS_NORM>({0, h, b.tensor(*d.pre_ff.get()), kEps, x, 0.0f}, n + "ffn/pre_norm");
}

// Steps 6 and 7b: the dense MLP and the experts, their norms and sums, the
// residual, the layer scalar and the next layer's (or the final) norm.
void DeviceModel::build_ffn(sdk::GraphBuilder& b, size_t l) {
  Layer& d = *layers_[l];
  const LayerSpec& spec = host_.specs[l];
  const std::string n = std::to_string(l) + "/";
  seatrt_tensor* x = b.tensor(*x_.get());
  seatrt_tensor* h = b.tensor(*h_.get());
  seatrt_tensor* gate = b.tensor(*gate_.get());
  seatrt_tensor* up = b.tensor(*up_.get());
  seatrt_tensor* act = b.tensor(*act_.get());
  seatrt_tensor* branch = b.tensor(*branch_.get());
  b.add<SEATRT_OP_LINEAR>({0, x, &d.gate->get(), gate, nullptr}, n + "mlp/gate_proj");
  b.add<SEATRT_OP_LINEAR>({0, x, &d.up->get(), up, nullptr}, n + "mlp/up_proj");
  b.add<SEATRT_OP_GLU>({0, SEATRT_ACT_GELU_TANH, gate, up, act}, n + "mlp/glu");
  b.add<SEATRT_OP_LINEAR>({0, act, &d.down->get(), branch, nullptr}, n + "mlp/down_proj");

  seatrt_tensor* m1 = b.tensor(*m1_.get());
  seatrt_tensor* r = b.tensor(*r_.get());
  seatrt_tensor* ein = b.tensor(*ein_.get());
  seatrt_tensor* router_logits = b.tensor(*router_logits_.get());
  seatrt_tensor* ids = b.tensor(*d.ids.get());
  seatrt_tensor* weights = b.tensor(*d.weights.get());
  seatrt_tensor* eout = b.tensor(*eout_.get());
  b.add<SEATRT_OP_RMS_NORM>({0, branch, b.tensor(*d.post_ff_1.get()), kEps, m1, 0.0f}, n + "mlp/post_norm_1");
  b.add<SEATRT_OP_RMS_NORM>({0, h, b.tensor(*d.router_in.get()), kEps, r, 0.0f}, n + "experts/router_norm");
  b.add<SEATRT_OP_RMS_NORM>({0, h, b.tensor(*d.pre_ff_2.get()), kEps, ein, 0.0f}, n + "experts/input_norm");
  b.add<SEATRT_OP_LINEAR>({0, r, &d.router->get(), router_logits, nullptr}, n + "experts/router");
  seatrt_router_topk_args topk{};
  topk.logits = router_logits;
  topk.top_k = static_cast<int32_t>(kTopK);
  topk.renormalize = 1;
  topk.per_expert_scale = b.tensor(*d.per_expert_scale.get());
  topk.ids = ids;
  topk.weights = weights;
  b.add<SEATRT_OP_ROUTER_TOPK>(topk, n + "experts/topk");
  b.add<SEATRT_OP_MOE>({0, SEATRT_ACT_GELU_TANH, static_cast<int32_t>(kExperts), ein, ids, weights, d.expert_gate.data(),
                        d.expert_up.data(), d.expert_down.data(), eout},
                       n + "experts/moe");
  b.mark(static_cast<int32_t>(l), "router_ids", ids);
  b.mark(static_cast<int32_t>(l), "router_weights", weights);

  b.add<SEATRT_OP_RMS_NORM>({0, eout, b.tensor(*d.post_ff_2.get()), kEps, eout, 0.0f}, n + "end/post_norm_2");
  b.add<SEATRT_OP_ELEMENTWISE>({0, SEATRT_EW_ADD, m1, eout, 0.0f, m1}, n + "end/sum");
  b.add<SEATRT_OP_RMS_NORM>({0, m1, b.tensor(*d.post_ff.get()), kEps, m1, 0.0f}, n + "end/post_norm");
  b.add<SEATRT_OP_ELEMENTWISE>({0, SEATRT_EW_ADD, h, m1, 0.0f, h}, n + "end/residual");
  if (spec.layer_scalar != 1.0f)
    b.add<SEATRT_OP_ELEMENTWISE>({0, SEATRT_EW_SCALE, h, nullptr, spec.layer_scalar, h}, n + "end/scale");
  DeviceTensor& next = l + 1 < layers_.size() ? layers_[l + 1]->input_norm : final_norm_;
  b.add<SEATRT_OP_RMS_NORM>({0, h, b.tensor(*next.get()), kEps, x, 0.0f}, n + "end/next_norm");
  b.mark(static_cast<int32_t>(l), "hidden", h);
}

Outputs DeviceModel::read_outputs() {
  Outputs o;
  const auto part = [&](DeviceTensor& d, int32_t dtype, std::vector<int64_t> shape) {
    Tensor t(dtype, std::move(shape));
    d.download(t);
    o.add_part(t.values());
  };
  part(h_, SEATRT_DTYPE_F32, {tokens_, kHidden});
  part(x_, SEATRT_DTYPE_F32, {tokens_, kHidden});
  part(logits_, SEATRT_DTYPE_F32, {outs_, kVocab});
  const std::vector<int64_t> cache_shape = {host_.num_blocks, kBlock, kKvHeads, kHeadDim};
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& d = *layers_[l];
    Tensor ids(SEATRT_DTYPE_I32, {tokens_, kTopK});
    d.ids.download(ids);
    for (int64_t i = 0; i < ids.numel(); ++i) o.exact.push_back(ids.as<int32_t>()[i]);
    part(d.weights, SEATRT_DTYPE_F32, {tokens_, kTopK});
    part(d.k_cache, SEATRT_DTYPE_BF16, cache_shape);
    if (d.cache.v_cache.data) part(d.v_cache, SEATRT_DTYPE_BF16, cache_shape);
  }
  return o;
}

}  // namespace seatrt::conformance::gemma
