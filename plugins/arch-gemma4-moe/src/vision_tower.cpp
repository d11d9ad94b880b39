// The vision tower's stages (transformers 5.17 Gemma4VisionModel +
// Gemma4MultimodalEmbedder): patch embedding, encoder layers, pooler,
// standardize, embed_vision.  Two of them are expressed with the paged
// attention op, the only kernel that reduces over rows:
//  - attention within the image is bidirectional: every patch is its own
//    one-row "sequence" whose length is the whole image, so the op's
//    causal rule (keys at positions <= the row's) admits every patch;
//  - the 3x3 average pooler is attention with all-zero queries and keys
//    (every score 0, so every weight 1/9) over the nine patches of a pooled
//    cell, which a block table of three 3-patch blocks picks out.
// In both the "cache" is the K/V (or hidden-state) buffer itself: patch p
// sits at slot p, which is the paged layout [blocks, block_size, heads,
// head_dim] of a contiguous [patches, heads, head_dim] buffer.
#include "vision_tower.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "emit.hpp"
#include "kernel_run.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace seatrt::gemma4 {

using sdk::Error;

namespace {

constexpr int32_t kAttentionBlock = 16;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// A [rows, heads, dim] view of `data` whose rows are `row_stride` floats
// apart and heads `head_stride` apart: one half of every head, for the 2-D
// RoPE.
seatrt_tensor half_heads(void* data, int64_t rows, int64_t heads, int64_t dim, int64_t head_stride,
                         int32_t device_kind) {
  seatrt_tensor t = view(data, SEATRT_DTYPE_F32, {rows, heads, dim}, device_kind);
  t.strides[0] = heads * head_stride;
  t.strides[1] = head_stride;
  return t;
}

seatrt_kv_layer as_cache(void* k, void* v, int64_t blocks, int32_t block_size, int64_t heads, int64_t dim,
                         int32_t device_kind) {
  seatrt_kv_layer c{};
  c.struct_size = sizeof(c);
  c.block_size = block_size;
  c.k_cache = view(k, SEATRT_DTYPE_F32, {blocks, block_size, heads, dim}, device_kind);
  c.v_cache = view(v, SEATRT_DTYPE_F32, {blocks, block_size, heads, dim}, device_kind);
  c.k_scale = 1.0f;
  c.v_scale = 1.0f;
  return c;
}

// Unscaled, uncapped attention over `cache` for one-row sequences (both of
// the tower's uses: a patch's view of its image, a pooled cell's nine patches).
seatrt_attention_args one_row_attention(const seatrt_tensor& q, const seatrt_kv_layer& cache,
                                        const seatrt_tensor& query_start, const seatrt_tensor& seq_lens,
                                        const seatrt_tensor& block_tables, int64_t num_seqs, int64_t max_seq_len,
                                        seatrt_tensor& out) {
  seatrt_attention_args a{};
  a.struct_size = sizeof(a);
  a.q = &q;
  a.cache = &cache;
  a.query_start = &query_start;
  a.seq_lens = &seq_lens;
  a.block_tables = &block_tables;
  a.num_seqs = static_cast<int32_t>(num_seqs);
  a.max_query_len = 1;
  a.max_seq_len = static_cast<int32_t>(max_seq_len);
  a.window = 0;
  a.scale = 1.0f;
  a.softcap = 0.0f;
  a.out = &out;
  return a;
}

}  // namespace

VisionTower::VisionTower(const seatrt_model_source* src, VisionConfig config, int32_t max_patches)
    : src_(src), k_(src->kernels), ctx_(src->kernel_context), c_(std::move(config)), max_patches_(max_patches) {
  if (!k_ || !ctx_) throw Error(SEATRT_ERR_INVALID_ARG, "vision tower: the model source has no kernel provider");
  const int64_t h = c_.hidden_size, qd = int64_t{c_.num_heads} * c_.head_dim;
  const int32_t dk = k_->device_kind;
  dense_.reserve(static_cast<std::size_t>(2 + 7 * c_.num_layers));

  // Stage 0: weights.
  const std::string t = c_.tower_prefix;
  input_proj_ = load_linear(t + "patch_embedder.input_proj.weight", h, c_.patch_values());
  position_table_ = load_f32(t + "patch_embedder.position_embedding_table");
  if (position_table_.ndim != 3 || position_table_.shape[0] != 2 || position_table_.shape[1] != c_.position_embedding_size ||
      position_table_.shape[2] != h)
    throw Error(SEATRT_ERR_INVALID_ARG, "tensor '" + t + "patch_embedder.position_embedding_table' must be [2, " +
                                            std::to_string(c_.position_embedding_size) + ", " + std::to_string(h) + "]");
  for (int32_t i = 0; i < c_.num_layers; ++i) {
    const std::string p = t + "encoder.layers." + std::to_string(i) + ".";
    Layer l{};
    l.q = load_linear(p + "self_attn.q_proj.linear.weight", qd, h);
    l.k = load_linear(p + "self_attn.k_proj.linear.weight", qd, h);
    l.v = load_linear(p + "self_attn.v_proj.linear.weight", qd, h);
    l.o = load_linear(p + "self_attn.o_proj.linear.weight", h, qd);
    l.gate = load_linear(p + "mlp.gate_proj.linear.weight", c_.intermediate_size, h);
    l.up = load_linear(p + "mlp.up_proj.linear.weight", c_.intermediate_size, h);
    l.down = load_linear(p + "mlp.down_proj.linear.weight", h, c_.intermediate_size);
    l.input_norm = load_f32(p + "input_layernorm.weight");
    l.post_attention_norm = load_f32(p + "post_attention_layernorm.weight");
    l.pre_ff_norm = load_f32(p + "pre_feedforward_layernorm.weight");
    l.post_ff_norm = load_f32(p + "post_feedforward_layernorm.weight");
    l.q_norm = load_f32(p + "self_attn.q_norm.weight");
    l.k_norm = load_f32(p + "self_attn.k_norm.weight");
    layers_.push_back(l);
  }
  projection_ = load_linear(c_.embed_prefix + "embedding_projection.weight", c_.text_hidden_size, h);

  // Constants: the -1 of 2*px-1, -std_bias (so standardize is ADD then
  // MUL), the RoPE frequencies of one half-head (HF computes them in fp32).
  std::vector<float> minus_one(static_cast<std::size_t>(c_.patch_values()), -1.0f);
  minus_one_ = view(upload(minus_one.data(), minus_one.size() * 4, nullptr), SEATRT_DTYPE_F32,
                    {c_.patch_values()}, dk);
  if (c_.standardize) {
    const seatrt_tensor bias = load_f32(t + "std_bias");
    std_scale_ = load_f32(t + "std_scale");
    minus_std_bias_ = view(allocate(static_cast<std::size_t>(h) * 4), SEATRT_DTYPE_F32, {h}, dk);
    sdk::GraphBuilder negate;
    emit::elementwise(negate, "negate std_bias", SEATRT_EW_SCALE, bias, nullptr, -1.0f, minus_std_bias_);
    run_nodes(k_, ctx_, nullptr, negate);
  }
  const int32_t half = c_.head_dim / 2;
  std::vector<float> inv_freq(static_cast<std::size_t>(half / 2));
  for (std::size_t i = 0; i < inv_freq.size(); ++i)
    inv_freq[i] = 1.0f / std::pow(c_.rope_theta, static_cast<float>(2 * i) / static_cast<float>(half));
  inv_freq_ = view(upload(inv_freq.data(), inv_freq.size() * 4, nullptr), SEATRT_DTYPE_F32,
                   {static_cast<int64_t>(inv_freq.size())}, dk);

  // Workspaces, rows rounded up to whole attention blocks.
  const auto rows = static_cast<std::size_t>(round_up(max_patches_, kAttentionBlock));
  const auto f32 = [&](int64_t cols) { return allocate(rows * static_cast<std::size_t>(cols) * 4); };
  ws_ = {f32(h), f32(h), f32(qd), f32(qd), f32(qd), f32(qd), f32(c_.intermediate_size),
         f32(c_.intermediate_size), f32(c_.intermediate_size), f32(h), f32(c_.patch_values()), nullptr};
  zeros_ = f32(qd);
  sdk::throw_if_error(k_->memset_zero(ctx_, nullptr, zeros_, rows * static_cast<std::size_t>(qd) * 4));
  const int64_t n = max_patches_, blocks = round_up(n, kAttentionBlock) / kAttentionBlock;
  index_bytes_ = static_cast<std::size_t>(2 * n + (n + 1) + n + n * blocks + (n + 1) + n + n) * 4;
  ws_.index = allocate(index_bytes_);
  sdk::throw_if_error(k_->stream_sync(ctx_, nullptr));
}

VisionTower::~VisionTower() {
  for (std::size_t i = 0; i < dense_.size(); ++i)
    if (prepared_[i] && k_->release_weight) k_->release_weight(ctx_, &dense_[i]);
  for (void* p : allocations_) k_->free_memory(ctx_, p);
}

void* VisionTower::allocate(std::size_t bytes) {
  void* p = nullptr;
  sdk::throw_if_error(k_->alloc(ctx_, std::max<std::size_t>(bytes, 1), &p));
  allocations_.push_back(p);
  workspace_bytes_ += std::max<std::size_t>(bytes, 1);
  return p;
}

uint64_t VisionTower::planned_workspace_bytes(const VisionConfig& c, int32_t max_patches) {
  const uint64_t h = static_cast<uint64_t>(c.hidden_size), qd = uint64_t(c.num_heads) * uint64_t(c.head_dim);
  const uint64_t inter = static_cast<uint64_t>(c.intermediate_size), pv = static_cast<uint64_t>(c.patch_values());
  const uint64_t rows = static_cast<uint64_t>(round_up(max_patches, kAttentionBlock));
  const uint64_t n = static_cast<uint64_t>(max_patches), blocks = rows / kAttentionBlock;
  // h, x, q, k, v, attn, gate, up, act, emb, px, zeros
  const uint64_t activations = rows * (3 * h + 5 * qd + 3 * inter + pv) * 4;
  const uint64_t index = (2 * n + (n + 1) + n + n * blocks + (n + 1) + n + n) * 4;
  const uint64_t constants = pv * 4 + (c.standardize ? h * 4 : 0) + uint64_t(c.head_dim / 4) * 4;
  return activations + index + constants;
}

void* VisionTower::upload(const void* host, std::size_t bytes, seatrt_stream stream) {
  void* d = allocate(bytes);
  sdk::throw_if_error(k_->copy(ctx_, stream, d, k_->device_kind, host, SEATRT_DEVICE_CPU, bytes));
  return d;
}

seatrt_tensor VisionTower::load_f32(const std::string& name) {
  seatrt_tensor t{};
  t.struct_size = sizeof(t);
  sdk::throw_if_error(src_->load_tensor(src_, name.c_str(), SEATRT_DTYPE_F32, &t));
  return t;
}

// A dense Linear read as stored: BF16 kept (the providers widen it exactly
// to fp32), anything else as F32; a provider refusing BF16 gets F32.
const seatrt_linear_weight* VisionTower::load_linear(const std::string& name, int64_t out_features,
                                                     int64_t in_features) {
  seatrt_checkpoint_tensor stored{};
  stored.struct_size = sizeof(stored);
  sdk::throw_if_error(src_->find_tensor(src_, name.c_str(), &stored));
  const bool bf16 = stored.dtype == SEATRT_DTYPE_BF16;
  seatrt_linear_weight w{};
  w.struct_size = sizeof(w);
  w.format = SEATRT_WFMT_DENSE;
  w.layout = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
  w.out_features = out_features;
  w.in_features = in_features;
  w.data.struct_size = sizeof(w.data);
  sdk::throw_if_error(src_->load_tensor(src_, name.c_str(), bf16 ? SEATRT_DTYPE_BF16 : SEATRT_DTYPE_F32, &w.data));
  if (w.data.ndim != 2 || w.data.shape[0] != out_features || w.data.shape[1] != in_features)
    throw Error(SEATRT_ERR_INVALID_ARG, "tensor '" + name + "' must have shape [" + std::to_string(out_features) +
                                            ", " + std::to_string(in_features) + "]");
  w.scales.struct_size = sizeof(seatrt_tensor);
  w.global_scale = 1.0f;
  bool prepared = false;
  if (k_->prepare_weight) {
    seatrt_status* st = k_->prepare_weight(ctx_, &w);
    const seatrt_host_api* host = sdk::host();
    if (st && bf16 && host && host->status_code(st) == SEATRT_ERR_UNSUPPORTED) {
      host->status_free(st);
      sdk::throw_if_error(src_->load_tensor(src_, name.c_str(), SEATRT_DTYPE_F32, &w.data));
      st = k_->prepare_weight(ctx_, &w);
    }
    sdk::throw_if_error(st);
    prepared = true;
  }
  dense_.push_back(w);
  prepared_.push_back(prepared);
  return &dense_.back();
}

void VisionTower::encode(seatrt_stream stream, const seatrt_tensor& pixel_values, int32_t grid_width,
                         int32_t grid_height, seatrt_tensor& out) {
  const int32_t kp = c_.pooling_kernel_size;
  const int64_t n = int64_t{grid_width} * grid_height;
  if (grid_width <= 0 || grid_height <= 0 || n > max_patches_ || grid_width % kp || grid_height % kp)
    throw Error(SEATRT_ERR_INVALID_ARG, "vision tower: a patch grid of " + std::to_string(grid_width) + "x" +
                                            std::to_string(grid_height) + " is empty, over " +
                                            std::to_string(max_patches_) + " patches or not pooled whole");
  if (grid_width > c_.position_embedding_size || grid_height > c_.position_embedding_size)
    throw Error(SEATRT_ERR_INVALID_ARG, "vision tower: patch grid wider than the position table");
  if (pixel_values.ndim != 2 || pixel_values.shape[0] != n || pixel_values.shape[1] != c_.patch_values())
    throw Error(SEATRT_ERR_INVALID_ARG, "vision tower: pixel_values must be [patches, patch_values]");
  const int64_t soft = n / (kp * kp);
  if (out.ndim != 2 || out.shape[0] != soft || out.shape[1] != c_.text_hidden_size)
    throw Error(SEATRT_ERR_INVALID_ARG, "vision tower: out must be [soft tokens, text hidden]");

  // Every kernel call of the image, run in order through run() once built.
  sdk::GraphBuilder g;
  const int32_t dk = k_->device_kind;
  const int64_t h = c_.hidden_size, heads = c_.num_heads, hd = c_.head_dim, inter = c_.intermediate_size;
  const int64_t blocks = round_up(n, kAttentionBlock) / kAttentionBlock;
  const int64_t pool_blocks_per_row = grid_width / kp;

  // Stage 1: the index arrays, built on the host and uploaded at once:
  // positions (x, y), the attention's one-row sequences over the whole
  // image, the pooler's nine-patch sequences.
  std::vector<int32_t> idx;
  idx.reserve(index_bytes_ / 4);
  const auto take = [&](int64_t count) {
    const std::size_t at = idx.size();
    idx.resize(at + static_cast<std::size_t>(count));
    return at;
  };
  const std::size_t pos_x = take(n), pos_y = take(n);
  for (int64_t p = 0; p < n; ++p) {
    idx[pos_x + p] = static_cast<int32_t>(p % grid_width);
    idx[pos_y + p] = static_cast<int32_t>(p / grid_width);
  }
  const std::size_t attn_start = take(n + 1), attn_lens = take(n), attn_tables = take(n * blocks);
  for (int64_t s = 0; s <= n; ++s) idx[attn_start + s] = static_cast<int32_t>(s);
  for (int64_t s = 0; s < n; ++s) {
    idx[attn_lens + s] = static_cast<int32_t>(n);
    for (int64_t b = 0; b < blocks; ++b) idx[attn_tables + s * blocks + b] = static_cast<int32_t>(b);
  }
  const std::size_t pool_start = take(soft + 1), pool_lens = take(soft), pool_tables = take(soft * kp);
  for (int64_t s = 0; s <= soft; ++s) idx[pool_start + s] = static_cast<int32_t>(s);
  for (int64_t s = 0; s < soft; ++s) {
    idx[pool_lens + s] = kp * kp;
    const int64_t py = s / pool_blocks_per_row, px = s % pool_blocks_per_row;
    // Block b of the pool cache holds patches 3b..3b+2: one row's slice.
    for (int64_t r = 0; r < kp; ++r)
      idx[pool_tables + s * kp + r] = static_cast<int32_t>((kp * py + r) * pool_blocks_per_row + px);
  }
  sdk::throw_if_error(k_->copy(ctx_, stream, ws_.index, dk, idx.data(), SEATRT_DEVICE_CPU, idx.size() * 4));
  auto* index = static_cast<int32_t*>(ws_.index);
  const auto i32 = [&](std::size_t at, std::initializer_list<int64_t> shape) {
    return view(index + at, SEATRT_DTYPE_I32, shape, dk);
  };
  const seatrt_tensor t_pos_x = i32(pos_x, {n}), t_pos_y = i32(pos_y, {n});

  const auto f32 = [&](void* data, std::initializer_list<int64_t> shape) { return view(data, SEATRT_DTYPE_F32, shape, dk); };
  seatrt_tensor hid = f32(ws_.h, {n, h}), x = f32(ws_.x, {n, h}), emb = f32(ws_.emb, {n, h});
  seatrt_tensor q = f32(ws_.q, {n, heads, hd}), k = f32(ws_.k, {n, heads, hd}), v = f32(ws_.v, {n, heads, hd});
  seatrt_tensor q2 = f32(ws_.q, {n, heads * hd}), k2 = f32(ws_.k, {n, heads * hd}), v2 = f32(ws_.v, {n, heads * hd});
  seatrt_tensor attn = f32(ws_.attn, {n, heads, hd}), attn2 = f32(ws_.attn, {n, heads * hd});
  seatrt_tensor gate = f32(ws_.gate, {n, inter}), up = f32(ws_.up, {n, inter}), act = f32(ws_.act, {n, inter});

  // Stage 2: patch embedding, Linear(2*px - 1) + table_x[x] + table_y[y].
  // 2*px - 1 rounds as HF's 2*(px - 0.5): scaling by 2 is exact.
  seatrt_tensor px2 = f32(ws_.px, {n, c_.patch_values()});
  emit::elementwise(g, "patch/scale", SEATRT_EW_SCALE, pixel_values, nullptr, 2.0f, px2);
  emit::elementwise(g, "patch/shift", SEATRT_EW_ADD, px2, &minus_one_, 0.0f, px2);
  emit::linear(g, "patch/input_proj", px2, input_proj_, hid);
  const int64_t table_rows = c_.position_embedding_size;
  seatrt_tensor table_x = f32(position_table_.data, {table_rows, h});
  seatrt_tensor table_y = f32(static_cast<float*>(position_table_.data) + table_rows * h, {table_rows, h});
  emit::embedding(g, "patch/position_x", t_pos_x, table_x, 1.0f, emb);
  emit::embedding(g, "patch/position_y", t_pos_y, table_y, 1.0f, x);
  emit::elementwise(g, "patch/positions", SEATRT_EW_ADD, emb, &x, 0.0f, emb);  // HF sums the two tables first
  emit::elementwise(g, "patch/add_positions", SEATRT_EW_ADD, hid, &emb, 0.0f, hid);

  // Stage 3: encoder layers.
  const seatrt_kv_layer cache = as_cache(ws_.k, ws_.v, blocks, kAttentionBlock, heads, hd, dk);
  const seatrt_tensor attn_qs = i32(attn_start, {n + 1}), attn_sl = i32(attn_lens, {n}),
                      attn_bt = i32(attn_tables, {n, blocks});
  const int64_t half = hd / 2;
  for (const Layer& l : layers_) {
    emit::rms_norm(g, "layer/input_norm", hid, &l.input_norm, c_.rms_eps, x);
    emit::linear(g, "layer/q_proj", x, l.q, q2);
    emit::linear(g, "layer/k_proj", x, l.k, k2);
    emit::linear(g, "layer/v_proj", x, l.v, v2);
    emit::rms_norm(g, "layer/q_norm", q, &l.q_norm, c_.rms_eps, q);
    emit::rms_norm(g, "layer/k_norm", k, &l.k_norm, c_.rms_eps, k);
    emit::rms_norm(g, "layer/v_norm", v, nullptr, c_.rms_eps, v);
    // 2-D RoPE: the first half of every head turns with x, the second with y.
    for (void* base : {ws_.q, ws_.k}) {
      seatrt_tensor first = half_heads(base, n, heads, half, hd, dk);
      seatrt_tensor second = half_heads(static_cast<float*>(base) + half, n, heads, half, hd, dk);
      emit::rope(g, "layer/rope_x", first, t_pos_x, inv_freq_, first);
      emit::rope(g, "layer/rope_y", second, t_pos_y, inv_freq_, second);
    }
    // Unscaled: q and k are normed; Gemma-4's tower does not scale.
    emit::attention(g, "layer/attention", one_row_attention(q, cache, attn_qs, attn_sl, attn_bt, n, n, attn));
    emit::linear(g, "layer/o_proj", attn2, l.o, x);
    emit::rms_norm(g, "layer/post_attention_norm", x, &l.post_attention_norm, c_.rms_eps, x);
    emit::elementwise(g, "layer/attention_residual", SEATRT_EW_ADD, hid, &x, 0.0f, hid);
    emit::rms_norm(g, "layer/pre_ff_norm", hid, &l.pre_ff_norm, c_.rms_eps, x);
    emit::linear(g, "layer/gate_proj", x, l.gate, gate);
    emit::linear(g, "layer/up_proj", x, l.up, up);
    emit::glu(g, "layer/glu", gate, up, act);
    emit::linear(g, "layer/down_proj", act, l.down, x);
    emit::rms_norm(g, "layer/post_ff_norm", x, &l.post_ff_norm, c_.rms_eps, x);
    emit::elementwise(g, "layer/ff_residual", SEATRT_EW_ADD, hid, &x, 0.0f, hid);
  }

  // Stage 4: the pooler, then x sqrt(hidden) in fp32.
  const seatrt_kv_layer pool_cache = as_cache(zeros_, ws_.h, n / kp, kp, heads, hd, dk);
  const seatrt_tensor pool_qs = i32(pool_start, {soft + 1}), pool_sl = i32(pool_lens, {soft}),
                      pool_bt = i32(pool_tables, {soft, kp});
  seatrt_tensor zero_q = f32(zeros_, {soft, heads, hd});
  seatrt_tensor pooled = f32(ws_.attn, {soft, heads, hd}), pooled2 = f32(ws_.attn, {soft, h});
  emit::attention(g, "pool/attention",
                  one_row_attention(zero_q, pool_cache, pool_qs, pool_sl, pool_bt, soft, kp * kp, pooled));
  emit::elementwise(g, "pool/scale", SEATRT_EW_SCALE, pooled2, nullptr,
                    static_cast<float>(std::sqrt(static_cast<double>(h))), pooled2);

  // Stage 5: standardize, then embed_vision (weightless norm, projection).
  if (c_.standardize) {
    emit::elementwise(g, "standardize/bias", SEATRT_EW_ADD, pooled2, &minus_std_bias_, 0.0f, pooled2);
    emit::elementwise(g, "standardize/scale", SEATRT_EW_MUL, pooled2, &std_scale_, 0.0f, pooled2);
  }
  emit::rms_norm(g, "embed/norm", pooled2, nullptr, c_.rms_eps, pooled2);
  emit::linear(g, "embed/projection", pooled2, projection_, out);
  run_nodes(k_, ctx_, stream, g);
  sync_stream(k_, ctx_, stream);
}

}  // namespace seatrt::gemma4
