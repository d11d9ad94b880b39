#include "gemma4_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>

#include "checkpoint_guard.hpp"
#include "emit.hpp"
#include "kernel_run.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::gemma4 {

namespace {

using sdk::Error;

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
    : src_(src), k_(src->kernels), ctx_(src->kernel_context), c_(std::move(config)), max_tokens_(src->max_batch_tokens),
      runner_(k_, ctx_) {
  if (!k_ || !ctx_) throw Error(SEATRT_ERR_INVALID_ARG, "create(): the model source has no kernel provider");
  if (max_tokens_ <= 0) throw Error(SEATRT_ERR_INVALID_ARG, "create(): max_batch_tokens must be positive");
  inspect_checkpoint(c_, src, {});

  load_embedding();
  w_.final_norm = load_plain(c_.prefix + "norm.weight");
  w_.layers.resize(static_cast<std::size_t>(c_.num_layers));
  for (int32_t i = 0; i < c_.num_layers; ++i) load_layer(i);

  const uint64_t workspace = allocate_workspaces();

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
  runner_.clear();  // the plans point at the weights and workspaces freed below
  if (k_->release_weight) {
    if (lm_head_prepared_) k_->release_weight(ctx_, &w_.lm_head);
    for (auto& w : w_.layers)
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
  lm_head_prepared_ =
      load_dense_weight(c_.prefix + "embed_tokens.weight", c_.vocab_size, c_.hidden_size, w_.lm_head);
  w_.embed = w_.lm_head.data;
}

float Model::read_scalar(const std::string& name) const {
  seatrt_checkpoint_tensor t{};
  t.struct_size = sizeof(t);
  sdk::throw_if_error(src_->find_tensor(src_, name.c_str(), &t));
  return decode_scalar(t);
}

void Model::load_layer(int32_t index) {
  const auto& g = c_.layers[static_cast<std::size_t>(index)];
  LayerWeights& w = w_.layers[static_cast<std::size_t>(index)];
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
  sync_stream(k_, ctx_, nullptr);
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
  seatrt_elementwise_args a{};
  a.struct_size = sizeof(a);
  a.op = SEATRT_EW_SCALE;
  a.a = &router_scale;
  a.alpha = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hs)));
  a.out = &folded;
  run_op(k_, ctx_, nullptr, sdk::make_op<SEATRT_OP_ELEMENTWISE>(a), "folding router.scale");
  sync_stream(k_, ctx_, nullptr);
  return folded;
}

// The activation buffers, max_tokens_ rows each; returns their bytes.
uint64_t Model::allocate_workspaces() {
  int64_t q_cols = 0, kv_cols = 0;
  for (const auto& g : c_.layers) {
    q_cols = std::max<int64_t>(q_cols, int64_t{c_.num_heads} * g.head_dim);
    kv_cols = std::max<int64_t>(kv_cols, int64_t{g.kv_heads} * g.head_dim);
  }
  uint64_t bytes = 0;
  const auto f32 = [&](int64_t cols) {
    const std::size_t n = static_cast<std::size_t>(max_tokens_) * static_cast<std::size_t>(cols) * sizeof(float);
    bytes += n;
    return allocate(n);
  };
  const int64_t h = c_.hidden_size, inter = c_.intermediate_size;
  ws_.h = f32(h);
  ws_.x = f32(h);
  ws_.q = f32(q_cols);
  ws_.k = f32(kv_cols);
  ws_.v = f32(kv_cols);
  ws_.attn = f32(q_cols);
  ws_.branch = f32(h);
  ws_.mlp_gate = f32(inter);
  ws_.mlp_up = f32(inter);
  ws_.mlp_act = f32(inter);
  ws_.rows = f32(h);
  if (c_.moe) {
    ws_.m1 = f32(h);
    ws_.router_in = f32(h);
    ws_.router_logits = f32(c_.num_experts);
    ws_.router_ids = f32(c_.top_k);  // I32, the same size
    ws_.router_weights = f32(c_.top_k);
    ws_.expert_in = f32(h);
    ws_.expert_out = f32(h);
  }
  return bytes;
}

}  // namespace seatrt::gemma4
