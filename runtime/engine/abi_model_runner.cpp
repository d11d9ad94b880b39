#include "abi_model_runner.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/cpp/tensor.hpp"

namespace seatrt::engine {

namespace {

seatrt_tensor make_tensor(seatrt_dtype dtype, void* data, std::initializer_list<int64_t> shape, int32_t device_kind) {
  return sdk::contiguous_tensor(data, dtype, shape, device_kind);
}

}  // namespace

void AbiModelRunner::check(seatrt_status* status, const char* what) {
  if (!status) return;
  std::string msg = std::string(what) + ": " + model_.host->status_message(status);
  const bool non_finite = model_.host->status_code(status) == SEATRT_ERR_NON_FINITE;
  model_.host->status_free(status);
  if (non_finite) msg = "non-finite values: " + msg;
  throw std::runtime_error(msg);
}

void* AbiModelRunner::alloc(size_t bytes) {
  void* p = nullptr;
  check(model_.kernels->alloc(model_.context, bytes == 0 ? 1 : bytes, &p), "allocating device memory");
  allocations_.push_back(p);
  return p;
}

void AbiModelRunner::upload(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  check(model_.kernels->copy(model_.context, stream_, dst, model_.kernels->device_kind, src, SEATRT_DEVICE_CPU, bytes),
        "copying step inputs to the device");
}

AbiModelRunner::AbiModelRunner(const AbiModel& model, const KvPlan& plan, int64_t max_batch_tokens, int32_t max_seqs,
                               int64_t max_model_len, bool repeat_decode)
    : model_(model), plan_(plan), max_tokens_(max_batch_tokens), max_seqs_(max_seqs), repeat_decode_(repeat_decode) {
  const seatrt_kernel_api* k = model_.kernels;
  if (k->stream_create) check(k->stream_create(model_.context, &stream_), "creating a stream");
  const int32_t device = k->device_kind;
  const auto dtype = plan.dtype == KvDtype::fp8    ? SEATRT_DTYPE_F8_E4M3
                     : plan.dtype == KvDtype::bf16 ? SEATRT_DTYPE_BF16
                                                   : SEATRT_DTYPE_F32;
  const auto elem = static_cast<size_t>(kv_dtype_bytes(plan.dtype));
  kv_layers_.resize(model_.layers.size());
  for (size_t l = 0; l < model_.layers.size(); ++l) {
    const auto& spec = model_.layers[l];
    const auto& group = spec.window == 0 ? plan.full : plan.windowed;
    if (!group) throw std::logic_error("KV plan has no group for layer " + std::to_string(l));
    const int64_t blocks = group->num_blocks;
    const size_t bytes = static_cast<size_t>(blocks) * static_cast<size_t>(plan.block_size) *
                         static_cast<size_t>(spec.kv_heads) * static_cast<size_t>(spec.head_dim) * elem;
    seatrt_kv_layer& kv = kv_layers_[l];
    kv.struct_size = sizeof kv;
    kv.block_size = plan.block_size;
    kv.k_cache = make_tensor(dtype, alloc(bytes), {blocks, plan.block_size, spec.kv_heads, spec.head_dim}, device);
    kv.v_cache = make_tensor(dtype, spec.single_tensor ? nullptr : alloc(bytes),
                             {blocks, plan.block_size, spec.kv_heads, spec.head_dim}, device);
    kv.k_scale = 1.0f;
    kv.v_scale = 1.0f;
  }
  max_blocks_ = (max_model_len + plan.block_size - 1) / plan.block_size + 1;
  const auto T = static_cast<size_t>(max_tokens_);
  const auto S = static_cast<size_t>(max_seqs_);
  token_ids_ = alloc(T * 4);
  positions_ = alloc(T * 4);
  query_start_ = alloc((S + 1) * 4);
  seq_lens_ = alloc(S * 4);
  block_tables_ = alloc(S * static_cast<size_t>(max_blocks_) * 4);
  slot_mapping_ = alloc(T * 8);
  window_block_tables_ = alloc(S * static_cast<size_t>(max_blocks_) * 4);
  window_slot_mapping_ = alloc(T * 8);
  logits_index_ = alloc(S * 4);
  logits_ = alloc(S * static_cast<size_t>(model_.vocab_size) * 4);
  provider_samples_ = table_samples(false);
  provider_bias_ = provider_samples_ && table_samples(true);
}

bool AbiModelRunner::table_samples(bool with_bias) const {
  const seatrt_kernel_api* k = model_.kernels;
  if (!SEATRT_HAS_FIELD(k, seatrt_kernel_api, supports) || !k->supports || !k->run) return false;
  seatrt_tensor logits = make_tensor(SEATRT_DTYPE_F32, logits_, {1, model_.vocab_size}, k->device_kind);
  const int32_t bias_id = 0;
  const float bias_value = 0.0f;
  seatrt_sampling_row row{};
  row.struct_size = sizeof row;
  row.temperature = 1.0f;
  row.top_p = 1.0f;
  row.repetition_penalty = 1.0f;
  if (with_bias) {
    row.bias_ids = &bias_id;
    row.bias_values = &bias_value;
    row.num_bias = 1;
  }
  int32_t token = 0;
  seatrt_sample_args a{};
  a.struct_size = sizeof a;
  a.logits = &logits;
  a.rows = &row;
  a.token = &token;
  const seatrt_op op = sdk::make_op<SEATRT_OP_SAMPLE>(a);
  return k->supports(model_.context, &op) != 0;
}

AbiModelRunner::~AbiModelRunner() {
  for (void* p : allocations_) model_.kernels->free_memory(model_.context, p);
  if (stream_ && model_.kernels->stream_destroy) model_.kernels->stream_destroy(model_.context, stream_);
}

void AbiModelRunner::forward(const StepBatch& b, std::vector<float>& logits) {
  const int32_t T = b.num_tokens();
  const int32_t S = b.num_seqs;
  if (T > max_tokens_ || S > max_seqs_ || b.max_blocks > max_blocks_ ||
      static_cast<int64_t>(b.logits_index.size()) > max_seqs_)  // the logits buffer holds max_seqs rows
    throw std::logic_error("step larger than the runner's staging buffers");
  const int32_t device = model_.kernels->device_kind;
  const bool has_full = !b.block_tables.empty();
  const bool has_window = !b.window_block_tables.empty();
  // A decode step (one token per sequence) repeats its shapes: the block
  // tables are padded to a power-of-two width and max_seq_len covers that
  // width (kernels read each sequence's length from seq_lens; extra key
  // splits find no keys).  Every sequence must want its row too: a plan is
  // kept per (S, width), and one made with fewer rows would leave a row
  // stale on the next launch (a one-token prefill chunk cut by the token
  // budget has none).
  const bool decode = repeat_decode_ && T == S && b.max_query_len == 1 &&
                      static_cast<int32_t>(b.logits_index.size()) == S;
  int64_t width = b.max_blocks;
  int32_t max_seq_len = b.max_seq_len;
  std::vector<int32_t> padded_full, padded_window;
  const std::vector<int32_t>* full_tables = &b.block_tables;
  const std::vector<int32_t>* window_tables = &b.window_block_tables;
  if (decode) {
    width = std::min(static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max(b.max_blocks, 1)))), max_blocks_);
    max_seq_len = static_cast<int32_t>(width * plan_.block_size);
    const auto pad = [&](const std::vector<int32_t>& in, std::vector<int32_t>& out) {
      if (in.empty() || width == b.max_blocks) return &in;
      out.assign(static_cast<size_t>(S) * static_cast<size_t>(width), -1);
      for (int32_t s = 0; s < S; ++s)
        std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(s) * b.max_blocks, b.max_blocks,
                    out.begin() + static_cast<std::ptrdiff_t>(s * width));
      return static_cast<const std::vector<int32_t>*>(&out);
    };
    full_tables = pad(b.block_tables, padded_full);
    window_tables = pad(b.window_block_tables, padded_window);
  }
  upload(token_ids_, b.token_ids.data(), b.token_ids.size() * 4);
  upload(positions_, b.positions.data(), b.positions.size() * 4);
  upload(query_start_, b.query_start.data(), b.query_start.size() * 4);
  upload(seq_lens_, b.seq_lens.data(), b.seq_lens.size() * 4);
  upload(logits_index_, b.logits_index.data(), b.logits_index.size() * 4);
  if (has_full) {
    upload(block_tables_, full_tables->data(), full_tables->size() * 4);
    upload(slot_mapping_, b.slot_mapping.data(), b.slot_mapping.size() * 8);
  }
  if (has_window) {
    upload(window_block_tables_, window_tables->data(), window_tables->size() * 4);
    upload(window_slot_mapping_, b.window_slot_mapping.data(), b.window_slot_mapping.size() * 8);
  }
  const auto num_logits = static_cast<int32_t>(b.logits_index.size());
  step_.token_ids = make_tensor(SEATRT_DTYPE_I32, token_ids_, {T}, device);
  step_.positions = make_tensor(SEATRT_DTYPE_I32, positions_, {T}, device);
  step_.query_start = make_tensor(SEATRT_DTYPE_I32, query_start_, {S + 1}, device);
  step_.seq_lens = make_tensor(SEATRT_DTYPE_I32, seq_lens_, {S}, device);
  // Without full layers every table is the window pool's.  The descriptors
  // are members so that their addresses repeat with the step's shapes.
  step_.block_tables = make_tensor(SEATRT_DTYPE_I32, has_full ? block_tables_ : window_block_tables_,
                                           {S, width}, device);
  step_.slot_mapping = make_tensor(SEATRT_DTYPE_I64, has_full ? slot_mapping_ : window_slot_mapping_, {T}, device);
  step_.window_block_tables = make_tensor(SEATRT_DTYPE_I32, window_block_tables_, {S, width}, device);
  step_.window_slot_mapping = make_tensor(SEATRT_DTYPE_I64, window_slot_mapping_, {T}, device);
  step_.logits_index = make_tensor(SEATRT_DTYPE_I32, logits_index_, {num_logits}, device);
  step_.logits_t = make_tensor(SEATRT_DTYPE_F32, logits_, {num_logits, model_.vocab_size}, device);

  seatrt_forward_batch fb{};
  fb.struct_size = sizeof fb;
  fb.num_tokens = T;
  fb.num_seqs = S;
  fb.max_query_len = b.max_query_len;
  fb.max_seq_len = max_seq_len;
  fb.num_logits = num_logits;
  fb.token_ids = &step_.token_ids;
  fb.positions = &step_.positions;
  fb.query_start = &step_.query_start;
  fb.seq_lens = &step_.seq_lens;
  fb.block_tables = &step_.block_tables;
  fb.slot_mapping = &step_.slot_mapping;
  fb.logits_index = &step_.logits_index;
  fb.kv_layers = kv_layers_.data();
  fb.host_query_start = b.query_start.data();
  fb.host_seq_lens = b.seq_lens.data();
  fb.logits = &step_.logits_t;
  fb.window_block_tables = has_window && has_full ? &step_.window_block_tables : nullptr;
  fb.window_slot_mapping = has_window && has_full ? &step_.window_slot_mapping : nullptr;
  fb.shape_repeats = decode && repeats({S, width}) ? 1 : 0;
  if (fb.shape_repeats) ++repeating_steps_;
  check(model_.arch->forward(model_.model, stream_, &fb), "forward");
  // The logits stay on the device when the provider samples there; the host
  // copy (1 MB per row at Gemma-4's vocabulary) is only for the host sampler.
  if (provider_samples()) {
    logits.clear();
  } else {
    logits.resize(static_cast<size_t>(num_logits) * static_cast<size_t>(model_.vocab_size));
    check(model_.kernels->copy(model_.context, stream_, logits.data(), SEATRT_DEVICE_CPU, logits_, device,
                               logits.size() * sizeof(float)),
          "copying logits to the host");
  }
  check(model_.kernels->stream_sync(model_.context, stream_), "forward (stream)");
  last_num_logits_ = num_logits;
}

bool AbiModelRunner::repeats(std::pair<int32_t, int64_t> key) {
  constexpr size_t kMaxShapes = 256;  // (sequences, width) pairs; beyond it steps are one-offs
  if (repeating_shapes_.count(key)) return true;
  if (repeating_shapes_.size() >= kMaxShapes) return false;
  repeating_shapes_.insert(key);
  return true;
}

bool AbiModelRunner::supports_logit_bias() const {
  if (!provider_samples_) return true;  // the engine's host sampler serves
  return provider_bias_;
}

bool AbiModelRunner::sample(std::span<const SampleInput> rows, std::vector<SampleResult>& out) {
  const seatrt_kernel_api* k = model_.kernels;
  if (!provider_samples_) return false;
  const auto B = static_cast<int32_t>(rows.size());
  if (B != last_num_logits_) throw std::logic_error("sample: rows do not match the last forward step's logits");
  int32_t num_top = 0;
  std::vector<seatrt_sampling_row> params(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const SampleInput& in = rows[i];
    const SamplingParams& p = *in.params;
    seatrt_sampling_row& r = params[i];
    r.struct_size = sizeof r;
    r.temperature = p.temperature;
    r.top_p = p.top_p;
    r.top_k = p.top_k;
    r.min_p = p.min_p;
    r.presence_penalty = p.presence_penalty;
    r.frequency_penalty = p.frequency_penalty;
    r.repetition_penalty = p.repetition_penalty;
    r.seed = p.seed;
    r.step = in.step;
    r.prompt_tokens = in.prompt_tokens.data();
    r.num_prompt_tokens = static_cast<int64_t>(in.prompt_tokens.size());
    r.output_tokens = in.output_tokens.data();
    r.num_output_tokens = static_cast<int64_t>(in.output_tokens.size());
    r.allowed_mask = in.allowed_mask.empty() ? nullptr : in.allowed_mask.data();
    r.allowed_mask_words = static_cast<int64_t>(in.allowed_mask.size());
    if (!p.bias_ids.empty()) {
      if (!supports_logit_bias())
        throw std::logic_error("sample: a row has a logit bias the kernel provider's sample op does not honour");
      r.bias_ids = p.bias_ids.data();
      r.bias_values = p.bias_values.data();
      r.num_bias = static_cast<int64_t>(p.bias_ids.size());
    }
    num_top = std::max(num_top, std::min(p.num_top_logprobs, 20));
  }
  const auto top_cells = static_cast<size_t>(B) * static_cast<size_t>(std::max(num_top, 1));
  std::vector<int32_t> token(rows.size()), non_finite(rows.size()), top_ids(top_cells);
  std::vector<float> logprob(rows.size()), top_logprobs(top_cells);
  seatrt_tensor logits_t = make_tensor(SEATRT_DTYPE_F32, logits_, {B, model_.vocab_size}, k->device_kind);
  seatrt_sample_args a{};
  a.struct_size = sizeof a;
  a.logits = &logits_t;
  a.rows = params.data();
  a.num_top = num_top;
  a.token = token.data();
  a.logprob = logprob.data();
  a.top_ids = top_ids.data();
  a.top_logprobs = top_logprobs.data();
  a.non_finite = non_finite.data();
  const seatrt_op op = sdk::make_op<SEATRT_OP_SAMPLE>(a);
  check(k->run(model_.context, stream_, &op), "sample");
  out.assign(rows.size(), SampleResult{});
  for (size_t i = 0; i < rows.size(); ++i) {
    SampleResult& r = out[i];
    r.non_finite = non_finite[i] != 0;
    r.event.token = r.non_finite ? -1 : token[i];
    r.event.logprob = logprob[i];
    const auto n = static_cast<size_t>(std::min(rows[i].params->num_top_logprobs, num_top));
    const size_t base = i * static_cast<size_t>(num_top);
    r.event.top_ids.assign(top_ids.begin() + static_cast<std::ptrdiff_t>(base),
                           top_ids.begin() + static_cast<std::ptrdiff_t>(base + n));
    r.event.top_logprobs.assign(top_logprobs.begin() + static_cast<std::ptrdiff_t>(base),
                                top_logprobs.begin() + static_cast<std::ptrdiff_t>(base + n));
  }
  return true;
}

}  // namespace seatrt::engine
