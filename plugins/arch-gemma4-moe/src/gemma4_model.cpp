#include "gemma4_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "checkpoint_guard.hpp"
#include "kernel_ops.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::gemma4 {

namespace {

using sdk::Error;

// HF multiplies the looked-up embedding by sqrt(hidden) cast to the weight
// dtype (bf16 in the released checkpoints): 53.066 -> 53.0 for 2816.
float bf16_round(float v) {
  uint32_t bits = std::bit_cast<uint32_t>(v);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xFFFF0000u);
}

// Bytes a tensor occupies on the device (for seatrt_model_info).
uint64_t tensor_bytes(const seatrt_tensor& t) {
  if (!t.data) return 0;
  uint64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= static_cast<uint64_t>(t.shape[i]);
  switch (t.dtype) {
    case SEATRT_DTYPE_F32:
    case SEATRT_DTYPE_I32: return 4 * n;
    case SEATRT_DTYPE_BF16:
    case SEATRT_DTYPE_F16: return 2 * n;
    default: return n;  // E2M1X2 / F8 / U8: one byte per element
  }
}

float decode_scalar(const seatrt_checkpoint_tensor& t) {
  uint16_t half;
  float f;
  switch (t.dtype) {
    case SEATRT_DTYPE_F32:
      std::memcpy(&f, t.data, 4);
      return f;
    case SEATRT_DTYPE_BF16:
      std::memcpy(&half, t.data, 2);
      return std::bit_cast<float>(static_cast<uint32_t>(half) << 16);
    default:
      throw Error(SEATRT_ERR_UNSUPPORTED, std::string("tensor '") + t.name + "': scalar must be BF16 or F32");
  }
}

}  // namespace

Model::Model(const seatrt_model_source* src, Config config)
    : src_(src), k_(src->kernels), ctx_(src->kernel_context), c_(std::move(config)), max_tokens_(src->max_batch_tokens) {
  if (!k_ || !ctx_) throw Error(SEATRT_ERR_INVALID_ARG, "create(): the model source has no kernel provider");
  if (max_tokens_ <= 0) throw Error(SEATRT_ERR_INVALID_ARG, "create(): max_batch_tokens must be positive");
  inspect_checkpoint(c_, src, {});

  load_embedding();
  final_norm_ = load_plain(c_.prefix + "norm.weight");
  layers_.resize(static_cast<std::size_t>(c_.num_layers));
  for (int32_t i = 0; i < c_.num_layers; ++i) load_layer(i);

  // Workspaces.
  int64_t q_cols = 0, kv_cols = 0;
  for (const auto& g : c_.layers) {
    q_cols = std::max<int64_t>(q_cols, int64_t{c_.num_heads} * g.head_dim);
    kv_cols = std::max<int64_t>(kv_cols, int64_t{g.kv_heads} * g.head_dim);
  }
  const auto rows = static_cast<std::size_t>(max_tokens_);
  const auto f32 = [&](int64_t cols) { return allocate(rows * static_cast<std::size_t>(cols) * sizeof(float)); };
  const int64_t h = c_.hidden_size;
  const std::size_t before = allocations_.size();
  uint64_t workspace = 0;
  ws_.h = f32(h);
  ws_.x = f32(h);
  ws_.q = f32(q_cols);
  ws_.k = f32(kv_cols);
  ws_.v = f32(kv_cols);
  ws_.attn = f32(q_cols);
  ws_.branch = f32(h);
  ws_.mlp_gate = f32(c_.intermediate_size);
  ws_.mlp_up = f32(c_.intermediate_size);
  ws_.mlp_act = f32(c_.intermediate_size);
  ws_.rows = f32(h);
  workspace += rows * static_cast<uint64_t>(5 * h + 2 * q_cols + 2 * kv_cols + 3 * c_.intermediate_size) * 4;
  if (c_.moe) {
    ws_.m1 = f32(h);
    ws_.router_in = f32(h);
    ws_.router_logits = f32(c_.num_experts);
    ws_.router_ids = f32(c_.top_k);  // I32, same size
    ws_.router_weights = f32(c_.top_k);
    ws_.expert_in = f32(h);
    ws_.expert_out = f32(h);
    workspace += rows * static_cast<uint64_t>(4 * h + c_.num_experts + 2 * c_.top_k) * 4;
  }
  (void)before;
  // A second stream where the provider can order two streams (forward: q's
  // norm beside k's and v's, the experts beside the dense MLP): at decode
  // sizes each branch leaves most of the device idle.
  if (c_.moe && SEATRT_HAS_FIELD(k_, seatrt_kernel_api, stream_wait) && k_->stream_wait && k_->stream_create &&
      k_->stream_destroy)
    sdk::throw_if_error(k_->stream_create(ctx_, &side_));

  kv_specs_ = kv_specs(c_);
  const uint64_t weight_bytes = info_.weight_bytes;  // counted as the weights loaded
  info_ = shape_info(c_);
  info_.weight_bytes = weight_bytes;
  info_.kv_layers = kv_specs_.data();
  info_.workspace_bytes = workspace;
}

seatrt_model_info Model::shape_info(const Config& c) {
  seatrt_model_info info{};
  info.struct_size = sizeof(info);
  info.vocab_size = c.vocab_size;
  info.hidden_size = c.hidden_size;
  info.num_layers = c.num_layers;
  info.max_position = c.max_position;
  info.is_moe = c.moe ? 1 : 0;
  return info;
}

std::vector<seatrt_kv_layer_spec> Model::kv_specs(const Config& c) {
  std::vector<seatrt_kv_layer_spec> specs;
  for (const auto& g : c.layers)
    specs.push_back(seatrt_kv_layer_spec{sizeof(seatrt_kv_layer_spec), g.kv_heads, g.head_dim, g.window, 0});
  return specs;
}

Model::~Model() {
  if (side_) k_->stream_destroy(ctx_, side_);  // waits for its work
  if (k_->release_weight) {
    if (lm_head_prepared_) k_->release_weight(ctx_, &lm_head_);
    for (auto& w : layers_)
      if (w.router_prepared) k_->release_weight(ctx_, &w.router_dense);
  }
  for (void* p : allocations_) k_->free_memory(ctx_, p);
}

void* Model::allocate(std::size_t bytes) {
  void* p = nullptr;
  sdk::throw_if_error(k_->alloc(ctx_, std::max<std::size_t>(bytes, 1), &p));
  allocations_.push_back(p);
  return p;
}

seatrt_tensor Model::load_plain(const std::string& name, int32_t dtype) {
  seatrt_tensor t{};
  t.struct_size = sizeof(t);
  sdk::throw_if_error(src_->load_tensor(src_, name.c_str(), dtype, &t));
  info_.weight_bytes += tensor_bytes(t);
  return t;
}

// A dense Linear read straight from the checkpoint tensor `name`, kept in
// BF16 when stored so (lossless: the providers widen it exactly, and it is
// half the bytes of F32 per step), else F32; a provider refusing BF16 dense
// weights gets F32.  Returns whether prepare_weight took it (release it then).
bool Model::load_dense_weight(const std::string& name, int64_t out_features, int64_t in_features,
                              seatrt_linear_weight& w) {
  seatrt_checkpoint_tensor stored{};
  stored.struct_size = sizeof(stored);
  sdk::throw_if_error(src_->find_tensor(src_, name.c_str(), &stored));
  const bool bf16 = stored.dtype == SEATRT_DTYPE_BF16;
  w = seatrt_linear_weight{};
  w.struct_size = sizeof(w);
  w.format = SEATRT_WFMT_DENSE;
  w.layout = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
  w.out_features = out_features;
  w.in_features = in_features;
  w.data = load_plain(name, bf16 ? SEATRT_DTYPE_BF16 : SEATRT_DTYPE_F32);
  if (w.data.ndim != 2 || w.data.shape[0] != out_features || w.data.shape[1] != in_features)
    throw Error(SEATRT_ERR_INVALID_ARG, "tensor '" + name + "' must have shape [" + std::to_string(out_features) +
                                            ", " + std::to_string(in_features) + "]");
  w.scales.struct_size = sizeof(seatrt_tensor);
  w.global_scale = 1.0f;
  if (!k_->prepare_weight) return false;
  seatrt_status* st = k_->prepare_weight(ctx_, &w);
  const seatrt_host_api* host = sdk::host();
  if (st && bf16 && host && host->status_code(st) == SEATRT_ERR_UNSUPPORTED) {
    // The BF16 copy stays allocated (the host owns it until the model goes).
    host->status_free(st);
    w.data = load_plain(name, SEATRT_DTYPE_F32);
    st = k_->prepare_weight(ctx_, &w);
  }
  sdk::throw_if_error(st);
  return true;
}

void Model::load_embedding() {
  // The tied embedding is also the LM head, the largest read of a decode
  // step (262,144 x 2,816): BF16 as stored halves its bytes against F32.
  lm_head_prepared_ = load_dense_weight(c_.prefix + "embed_tokens.weight", c_.vocab_size, c_.hidden_size, lm_head_);
  embed_ = lm_head_.data;
}

float Model::read_scalar(const std::string& name) const {
  seatrt_checkpoint_tensor t{};
  t.struct_size = sizeof(t);
  sdk::throw_if_error(src_->find_tensor(src_, name.c_str(), &t));
  return decode_scalar(t);
}

void Model::load_layer(int32_t index) {
  const auto& g = c_.layers[static_cast<std::size_t>(index)];
  LayerWeights& w = layers_[static_cast<std::size_t>(index)];
  const std::string p = c_.prefix + "layers." + std::to_string(index) + ".";
  const auto linear = [&](const std::string& module) {
    const seatrt_linear_weight* out = nullptr;
    sdk::throw_if_error(src_->load_linear(src_, (p + module).c_str(), &out));
    info_.weight_bytes += tensor_bytes(out->data) + tensor_bytes(out->scales);
    return out;
  };
  w.q_proj = linear("self_attn.q_proj");
  w.k_proj = linear("self_attn.k_proj");
  if (!g.k_eq_v) w.v_proj = linear("self_attn.v_proj");
  w.o_proj = linear("self_attn.o_proj");
  w.gate_proj = linear("mlp.gate_proj");
  w.up_proj = linear("mlp.up_proj");
  w.down_proj = linear("mlp.down_proj");
  w.input_norm = load_plain(p + "input_layernorm.weight");
  w.post_attention_norm = load_plain(p + "post_attention_layernorm.weight");
  w.pre_ff_norm = load_plain(p + "pre_feedforward_layernorm.weight");
  w.post_ff_norm = load_plain(p + "post_feedforward_layernorm.weight");
  w.q_norm = load_plain(p + "self_attn.q_norm.weight");
  w.k_norm = load_plain(p + "self_attn.k_norm.weight");
  w.layer_scalar = read_scalar(p + "layer_scalar");
  if (c_.moe) {
    w.post_ff_norm_1 = load_plain(p + "post_feedforward_layernorm_1.weight");
    w.pre_ff_norm_2 = load_plain(p + "pre_feedforward_layernorm_2.weight");
    w.post_ff_norm_2 = load_plain(p + "post_feedforward_layernorm_2.weight");
    w.router_input_weight = fold_router_scale(load_plain(p + "router.scale"));
    w.per_expert_scale = load_plain(p + "router.per_expert_scale");
    // Read as stored (BF16 in released checkpoints) rather than through the
    // quantization plugin, which widens unquantized Linears to F32: the
    // router then takes the CUDA provider's small-N BF16 kernel and half the
    // bytes.  The checkpoint guard has already refused a quantized router.
    w.router_prepared = load_dense_weight(p + "router.proj.weight", c_.num_experts, c_.hidden_size, w.router_dense);
    w.router_proj = &w.router_dense;
    for (int32_t e = 0; e < c_.num_experts; ++e) {
      const std::string x = "experts." + std::to_string(e) + ".";
      w.expert_gate.push_back(*linear(x + "gate_proj"));
      w.expert_up.push_back(*linear(x + "up_proj"));
      w.expert_down.push_back(*linear(x + "down_proj"));
    }
  }
  // RoPE frequencies (zeros = unrotated pairs) on the device.
  const std::size_t bytes = g.inv_freq.size() * sizeof(float);
  void* d = allocate(bytes);
  sdk::throw_if_error(k_->copy(ctx_, nullptr, d, k_->device_kind, g.inv_freq.data(), SEATRT_DEVICE_CPU, bytes));
  if (k_->stream_sync) sdk::throw_if_error(k_->stream_sync(ctx_, nullptr));
  w.inv_freq = view(d, SEATRT_DTYPE_F32, {static_cast<int64_t>(g.inv_freq.size())}, k_->device_kind);
}

// HF's router input is rmsnorm(h) * router.scale * hidden^-1/2 (weightless
// norm).  The two factors are folded into one weight vector here, once, so
// the forward runs one weighted rms_norm instead of a norm and two
// elementwise ops; equal up to fp32 rounding of the product.
seatrt_tensor Model::fold_router_scale(const seatrt_tensor& router_scale) {
  const int64_t hs = c_.hidden_size;
  seatrt_tensor folded = view(allocate(static_cast<std::size_t>(hs) * sizeof(float)), SEATRT_DTYPE_F32, {hs},
                              k_->device_kind);
  const Ops ops(k_, ctx_, nullptr);
  ops.elementwise(SEATRT_EW_SCALE, router_scale, nullptr, static_cast<float>(1.0 / std::sqrt(static_cast<double>(hs))),
                  folded);
  ops.sync();
  return folded;
}

// Kernel calls per MoE layer with its own v_proj (one less on k_eq_v layers),
// kv_store and attention included:
//   before ABI 1.1: 32 -- 11 rms_norm, 2 rope, 6 add/mul/scale, 13 others;
//   a 1.0 provider now: 30 (the router input is one weighted rms_norm);
//   an ABI 1.1 provider: 22 -- the input norm comes with the previous layer's
//   end, q/k norms carry their rope, each norm-add(-scale)(-norm) chain
//   (after attention, the expert branch, the layer's end) is one add_rms_norm;
//   an ABI 1.2 provider: 17 -- q/k/v one linear_multi, gate/up/glu one
//   linear_glu, the router's and the experts' input norms one rms_norm_multi;
//   an ABI 1.4 provider: 14 -- q/k/v's norms, RoPE and the KV store one
//   qkv_norm_rope_store; 12 in prefill-sized forwards (kernel_ops.hpp says
//   when), where the feed-forward end (both branches' norms, their sum's, the
//   residual add and the next norm) is one add_rms_norm_pair;
//   an ABI 1.5 provider: 12 (10 in prefill) -- the router's and the
//   experts' input norms, the router Linear and top-k one route call, on
//   the experts' branch, the longer of the two.
void Model::forward(seatrt_stream stream, const seatrt_forward_batch& b) {
  const int64_t t = b.num_tokens;
  if (t <= 0 || t > max_tokens_)
    throw Error(SEATRT_ERR_INVALID_ARG, "forward: " + std::to_string(t) + " tokens (the model was created for at most " +
                                            std::to_string(max_tokens_) + ")");
  if (b.num_logits < 0 || b.num_logits > t)
    throw Error(SEATRT_ERR_INVALID_ARG, "forward: num_logits " + std::to_string(b.num_logits) + " out of range");
  const Ops ops(k_, ctx_, stream);
  // Branches on side_ (SEATRT_GEMMA4_STREAMS=0, read per forward: a switch
  // for tests and benchmarks, keeps everything on `stream`).
  const char* streams_env = std::getenv("SEATRT_GEMMA4_STREAMS");
  const bool fork = side_ && !(streams_env && std::string(streams_env) == "0");
  // "moe": only the experts' branch forks; otherwise q's norm and RoPE also
  // run on `side` beside k's and v's norms and the KV store.
  const bool fork_q = fork && !(streams_env && std::string(streams_env) == "moe");
  // A MoE layer's experts' branch goes to `side` and the dense MLP stays on
  // `stream` (version 16, measured).  "experts-main" (opt-in until measured
  // on a device) swaps them: the experts' branch -- the longer one -- stays
  // on `stream`, so its first kernel (route) launches early under PDL and
  // prefetches the router's weights, which a kernel after a cross-stream
  // wait cannot, and the shorter dense MLP takes the cross-stream wait.
  const bool experts_side = !(streams_env && std::string(streams_env) == "experts-main");
  // SEATRT_GEMMA4_PREFETCH=1 (opt-in until measured on a device): at decode
  // sizes the dense branch, which ends well before the experts' at batch 1,
  // then asks the provider (ABI 1.6 prefetch_weights) to bring the next
  // layer's attention Linears into its cache, so their first loads do not
  // wait on DRAM.
  const char* prefetch_env = std::getenv("SEATRT_GEMMA4_PREFETCH");
  const bool prefetch_next = prefetch_env && std::string(prefetch_env) == "1" && t <= 64 && ops.has_prefetch();
  const Ops side(k_, ctx_, fork ? side_ : stream);
  auto order = [&](seatrt_stream waiter, seatrt_stream signaler) {
    if (fork) sdk::throw_if_error(k_->stream_wait(ctx_, waiter, signaler));
  };
  const int dk = k_->device_kind;
  const int64_t hs = c_.hidden_size;
  const float eps = c_.rms_eps;
  const auto f32 = [&](void* p, std::initializer_list<int64_t> shape) { return view(p, SEATRT_DTYPE_F32, shape, dk); };
  const auto trace = [&](int32_t layer, const char* name, const seatrt_tensor& tensor) {
    if (!trace_) return;
    ops.sync();
    trace_(trace_user_, layer, name, &tensor);
  };

  seatrt_tensor h = f32(ws_.h, {t, hs});
  seatrt_tensor x = f32(ws_.x, {t, hs});
  seatrt_tensor branch = f32(ws_.branch, {t, hs});
  ops.embedding(*b.token_ids, embed_, bf16_round(std::sqrt(static_cast<float>(hs))), h);
  trace(-1, "hidden", h);

  // x holds rmsnorm(h) * input_layernorm: the end of each layer computes the
  // next layer's (and after the last, the final norm) with its residual add.
  if (c_.num_layers > 0) ops.rms_norm(h, &layers_[0].input_norm, eps, x);
  for (int32_t li = 0; li < c_.num_layers; ++li) {
    const auto& g = c_.layers[static_cast<std::size_t>(li)];
    const LayerWeights& w = layers_[static_cast<std::size_t>(li)];
    const int64_t d = g.head_dim, nq = c_.num_heads, nkv = g.kv_heads;

    // Attention: q = rope(q_norm(q_proj a)); k = rope(k_norm(k_raw));
    // v = v_norm(v_raw), v_raw = k_raw on k_eq_v layers.  Scale 1.0.
    seatrt_tensor q2 = f32(ws_.q, {t, nq * d}), q3 = f32(ws_.q, {t, nq, d});
    seatrt_tensor k2 = f32(ws_.k, {t, nkv * d}), k3 = f32(ws_.k, {t, nkv, d}), k_rows = f32(ws_.k, {t * nkv, d});
    seatrt_tensor v2 = f32(ws_.v, {t, nkv * d}), v3 = f32(ws_.v, {t, nkv, d}), v_rows = f32(ws_.v, {t * nkv, d});
    // q, k (and v) from one read of x (ABI 1.2 linear_multi, else a linear
    // each), then the norms.
    const seatrt_linear_weight* qkv_w[3] = {w.q_proj, w.k_proj, w.v_proj};
    seatrt_tensor* qkv_out[3] = {&q2, &k2, &v2};
    ops.linear_multi(x, w.v_proj ? 3 : 2, qkv_w, qkv_out);
    // Sliding layers may be paged in their own pool (appended batch fields).
    const bool own_pool = g.window > 0 && b.struct_size >= offsetof(seatrt_forward_batch, window_slot_mapping) + sizeof(b.window_slot_mapping) &&
                          b.window_block_tables && b.window_slot_mapping;
    const seatrt_tensor& slots = own_pool ? *b.window_slot_mapping : *b.slot_mapping;
    if (ops.has_qkv_norm_rope_store()) {
      // ABI 1.4: the three norms, both RoPEs and the store in one call.
      ops.qkv_norm_rope_store(q3, k3, w.v_proj ? &v3 : nullptr, &w.q_norm, &w.k_norm, nullptr, eps, *b.positions,
                              w.inv_freq, slots, &b.kv_layers[li]);
    } else {
      if (fork_q) order(side_, stream);  // q, k and v are ready
      (fork_q ? side : ops).rms_norm_rope(q3, &w.q_norm, eps, *b.positions, w.inv_freq);
      if (w.v_proj) {
        ops.rms_norm(v_rows, nullptr, eps, v_rows);
      } else {
        ops.rms_norm(k_rows, nullptr, eps, v_rows);  // from the raw k, before k is normed
      }
      ops.rms_norm_rope(k3, &w.k_norm, eps, *b.positions, w.inv_freq);
      ops.kv_store(k3, v3, slots, &b.kv_layers[li]);
      if (fork_q) order(stream, side_);  // join: q normed and rotated
    }
    seatrt_tensor attn3 = f32(ws_.attn, {t, nq, d}), attn2 = f32(ws_.attn, {t, nq * d});
    seatrt_attention_args a{};
    a.struct_size = sizeof(a);
    a.q = &q3;
    a.cache = &b.kv_layers[li];
    a.query_start = b.query_start;
    a.seq_lens = b.seq_lens;
    a.block_tables = own_pool ? b.window_block_tables : b.block_tables;
    a.num_seqs = b.num_seqs;
    a.max_query_len = b.max_query_len;
    a.max_seq_len = b.max_seq_len;
    a.window = g.window;
    a.scale = 1.0f;
    a.softcap = c_.attn_softcap;
    a.out = &attn3;
    ops.attention(a);
    ops.linear(attn2, w.o_proj, branch);
    // h += post_attention_norm(branch); x = pre_feedforward_layernorm(h).
    ops.add_rms_norm(branch, &w.post_attention_norm, h, eps, 1.0f, &w.pre_ff_norm, &x);

    // Feed-forward: dense MLP (+ routed experts), each branch normed, the
    // sum normed again, residual add, then the whole stream x layer_scalar.
    const int64_t inter = c_.intermediate_size;
    seatrt_tensor gate = f32(ws_.mlp_gate, {t, inter}), up = f32(ws_.mlp_up, {t, inter}),
                  act = f32(ws_.mlp_act, {t, inter});
    seatrt_tensor m1 = f32(ws_.m1, {t, hs});  // MoE: dense branch + expert branch, each normed
    const bool last = li + 1 == c_.num_layers;
    const seatrt_tensor* next_norm = last ? &final_norm_ : &layers_[static_cast<std::size_t>(li) + 1].input_norm;
    const bool want_x = !last || b.num_logits > 0;
    // ABI 1.4 add_rms_norm_pair (prefill-sized forwards, kernel_ops.hpp): the dense
    // branch's norm, the expert branch's, their sum's and the layer's end
    // below in one call after the join.
    const bool pair = c_.moe && ops.has_add_rms_norm_pair(t);
    // Fork: one branch goes to `side` (h and x are ready here); they meet
    // again on `stream` before the layer's end.  `dense` runs the dense
    // MLP, `experts` the router and the experts.
    if (c_.moe) order(side_, stream);
    const Ops& dense = c_.moe && !experts_side ? side : ops;
    const Ops& experts = experts_side ? side : ops;
    dense.linear_glu(x, w.gate_proj, w.up_proj, gate, up, act);
    dense.linear(act, w.down_proj, branch);
    if (c_.moe) {
      const int64_t e = c_.num_experts, k = c_.top_k;
      if (!pair) dense.rms_norm(branch, &w.post_ff_norm_1, eps, m1);
      if (prefetch_next && !last) {
        const auto& nw = layers_[static_cast<std::size_t>(li) + 1];
        dense.prefetch({nw.q_proj, nw.k_proj, nw.v_proj, nw.o_proj});
      }
      // Router on the un-normed residual: RMSNorm with the folded
      // scale x H^-1/2 weight (fold_router_scale); it and the experts'
      // input are norms of h with two gains, one call (ABI 1.2
      // rms_norm_multi, else one each).
      seatrt_tensor r = f32(ws_.router_in, {t, hs});
      seatrt_tensor logits = f32(ws_.router_logits, {t, e});
      seatrt_tensor ids = view(ws_.router_ids, SEATRT_DTYPE_I32, {t, k}, dk);
      seatrt_tensor weights = f32(ws_.router_weights, {t, k});
      seatrt_tensor ein = f32(ws_.expert_in, {t, hs}), eout = f32(ws_.expert_out, {t, hs});
      if (experts.has_route()) {
        // ABI 1.5: the two norms, the router Linear and top-k in one call.
        experts.route(h, eps, &w.router_input_weight, w.router_proj, c_.top_k, &w.per_expert_scale, &w.pre_ff_norm_2,
                      &ein, ids, weights);
      } else {
        const seatrt_tensor* norm_w[2] = {&w.router_input_weight, &w.pre_ff_norm_2};
        seatrt_tensor* norm_out[2] = {&r, &ein};
        experts.rms_norm_multi(h, eps, 2, norm_w, norm_out);
        experts.linear(r, w.router_proj, logits);
        experts.router_topk(logits, c_.top_k, &w.per_expert_scale, ids, weights);
      }
      experts.moe(c_.num_experts, ein, ids, weights, w.expert_gate.data(), w.expert_up.data(), w.expert_down.data(),
                  eout);
      order(stream, side_);  // join: eout and the dense branch both ready on `stream`
      trace(li, "router_ids", ids);
      trace(li, "router_weights", weights);
      // h = (h + post_feedforward_layernorm(norm_1(dense) + norm_2(eout))) x
      // layer_scalar, and x = the next layer's input norm of h (the final
      // norm after the last layer, when logits are wanted).
      if (pair) {
        ops.add_rms_norm_pair(branch, &w.post_ff_norm_1, eout, &w.post_ff_norm_2, &w.post_ff_norm, h, eps,
                              w.layer_scalar, next_norm, want_x ? &x : nullptr);
      } else {
        ops.add_rms_norm(eout, &w.post_ff_norm_2, m1, eps, 1.0f, nullptr, nullptr);  // m1 += norm_2(eout)
        ops.add_rms_norm(m1, &w.post_ff_norm, h, eps, w.layer_scalar, next_norm, want_x ? &x : nullptr);
      }
    } else {
      // The same for the dense MLP alone.
      ops.add_rms_norm(branch, &w.post_ff_norm, h, eps, w.layer_scalar, next_norm, want_x ? &x : nullptr);
    }
    trace(li, "hidden", h);
  }

  // Final norm (x, unless there are no layers), the rows that need logits,
  // tied LM head, soft-cap.
  if (b.num_logits == 0) return;
  if (c_.num_layers == 0) ops.rms_norm(h, &final_norm_, eps, x);
  seatrt_tensor rows = f32(ws_.rows, {b.num_logits, hs});
  ops.gather_rows(x, *b.logits_index, rows);
  ops.linear(rows, &lm_head_, *b.logits);
  if (c_.final_softcap > 0.0f) ops.elementwise(SEATRT_EW_SOFTCAP, *b.logits, nullptr, c_.final_softcap, *b.logits);
}

}  // namespace seatrt::gemma4
