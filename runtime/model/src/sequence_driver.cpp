#include "seatrt/model/sequence_driver.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "seatrt/cpp/tensor.hpp"
#include "seatrt/model/status.hpp"

namespace seatrt::model {

namespace {

seatrt_tensor make_tensor(int32_t dtype, void* data, std::initializer_list<int64_t> shape, int32_t device_kind) {
  return sdk::contiguous_tensor(data, dtype, shape, device_kind);
}

}  // namespace

SequenceDriver::SequenceDriver(const LoadedModel& model, int32_t max_tokens)
    : model_(model), k_(model.kernels()), ctx_(model.kernel_context()), max_tokens_(max_tokens) {
  if (max_tokens <= 0) throw StatusError(SEATRT_ERR_INVALID_ARG, "max_tokens must be positive");
  num_blocks_ = (max_tokens + kBlockSize - 1) / kBlockSize;
  if (k_->stream_create) check_status(model.host(), k_->stream_create(ctx_, &stream_), "creating a stream");
  const auto& info = model.info();
  for (int32_t layer = 0; layer < info.num_layers; ++layer) {
    const seatrt_kv_layer_spec& spec = info.kv_layers[layer];
    const std::size_t bytes = static_cast<std::size_t>(num_blocks_) * kBlockSize * static_cast<std::size_t>(spec.kv_heads) *
                              static_cast<std::size_t>(spec.head_dim) * sizeof(float);
    seatrt_kv_layer kv{};
    kv.struct_size = sizeof(seatrt_kv_layer);
    kv.block_size = kBlockSize;
    kv.k_cache = make_tensor(SEATRT_DTYPE_F32, device_alloc(bytes), {num_blocks_, kBlockSize, spec.kv_heads, spec.head_dim},
                             k_->device_kind);
    if (!spec.single_tensor)
      kv.v_cache = make_tensor(SEATRT_DTYPE_F32, device_alloc(bytes),
                               {num_blocks_, kBlockSize, spec.kv_heads, spec.head_dim}, k_->device_kind);
    kv.k_scale = 1.0f;
    kv.v_scale = 1.0f;
    kv_layers_.push_back(kv);
  }
}

SequenceDriver::~SequenceDriver() {
  for (void* p : allocations_) k_->free_memory(ctx_, p);
  if (stream_ && k_->stream_destroy) k_->stream_destroy(ctx_, stream_);
}

void* SequenceDriver::device_alloc(std::size_t bytes) {
  void* p = nullptr;
  check_status(model_.host(), k_->alloc(ctx_, std::max<std::size_t>(bytes, 1), &p), "allocating the KV cache");
  allocations_.push_back(p);
  return p;
}

void SequenceDriver::upload(void* device, const void* host, std::size_t bytes) {
  check_status(model_.host(), k_->copy(ctx_, stream_, device, k_->device_kind, host, SEATRT_DEVICE_CPU, bytes),
               "copying inputs");
}

std::vector<float> SequenceDriver::step(std::span<const int32_t> tokens, bool all_rows) {
  const auto n = static_cast<int32_t>(tokens.size());
  if (n == 0) throw StatusError(SEATRT_ERR_INVALID_ARG, "no tokens to run");
  if (length_ + n > max_tokens_)
    throw StatusError(SEATRT_ERR_INVALID_ARG, "sequence of " + std::to_string(length_ + n) +
                                                  " tokens exceeds the driver's " + std::to_string(max_tokens_));
  const int32_t vocab = vocab_size();
  for (int32_t id : tokens)
    if (id < 0 || id >= vocab)
      throw StatusError(SEATRT_ERR_INVALID_ARG, "token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                                    std::to_string(vocab) + ")");
  const int32_t rows = all_rows ? n : 1;
  const int32_t seq_len = length_ + n;

  std::vector<int32_t> positions(static_cast<std::size_t>(n));
  std::iota(positions.begin(), positions.end(), length_);
  std::vector<int64_t> slots(positions.begin(), positions.end());
  const std::vector<int32_t> query_start{0, n};
  const std::vector<int32_t> seq_lens{seq_len};
  std::vector<int32_t> block_table(static_cast<std::size_t>(num_blocks_));
  std::iota(block_table.begin(), block_table.end(), 0);
  std::vector<int32_t> logits_index(static_cast<std::size_t>(rows));
  std::iota(logits_index.begin(), logits_index.end(), all_rows ? 0 : n - 1);

  // Per-step inputs live in device memory freed when the step ends.
  const std::size_t mark = allocations_.size();
  const auto put = [&](const void* host, std::size_t bytes) {
    void* d = device_alloc(bytes);
    upload(d, host, bytes);
    return d;
  };
  const int dk = k_->device_kind;
  const seatrt_tensor t_ids = make_tensor(SEATRT_DTYPE_I32, put(tokens.data(), tokens.size_bytes()), {n}, dk);
  const seatrt_tensor t_pos = make_tensor(SEATRT_DTYPE_I32, put(positions.data(), positions.size() * 4), {n}, dk);
  const seatrt_tensor t_qs = make_tensor(SEATRT_DTYPE_I32, put(query_start.data(), 8), {2}, dk);
  const seatrt_tensor t_sl = make_tensor(SEATRT_DTYPE_I32, put(seq_lens.data(), 4), {1}, dk);
  const seatrt_tensor t_bt =
      make_tensor(SEATRT_DTYPE_I32, put(block_table.data(), block_table.size() * 4), {1, num_blocks_}, dk);
  const seatrt_tensor t_slots = make_tensor(SEATRT_DTYPE_I64, put(slots.data(), slots.size() * 8), {n}, dk);
  const seatrt_tensor t_li = make_tensor(SEATRT_DTYPE_I32, put(logits_index.data(), logits_index.size() * 4), {rows}, dk);
  const std::size_t logits_bytes = static_cast<std::size_t>(rows) * static_cast<std::size_t>(vocab) * sizeof(float);
  seatrt_tensor t_logits = make_tensor(SEATRT_DTYPE_F32, device_alloc(logits_bytes), {rows, vocab}, dk);

  seatrt_forward_batch batch{};
  batch.struct_size = sizeof(seatrt_forward_batch);
  batch.num_tokens = n;
  batch.num_seqs = 1;
  batch.max_query_len = n;
  batch.max_seq_len = seq_len;
  batch.num_logits = rows;
  batch.token_ids = &t_ids;
  batch.positions = &t_pos;
  batch.query_start = &t_qs;
  batch.seq_lens = &t_sl;
  batch.block_tables = &t_bt;
  batch.slot_mapping = &t_slots;
  batch.logits_index = &t_li;
  batch.kv_layers = kv_layers_.data();
  batch.host_query_start = query_start.data();
  batch.host_seq_lens = seq_lens.data();
  batch.logits = &t_logits;

  std::vector<float> logits(static_cast<std::size_t>(rows) * static_cast<std::size_t>(vocab));
  const auto release_step = [&] {
    while (allocations_.size() > mark) {
      k_->free_memory(ctx_, allocations_.back());
      allocations_.pop_back();
    }
  };
  try {
    check_status(model_.host(), model_.arch().forward(model_.model(), stream_, &batch), "forward");
    check_status(model_.host(),
                 k_->copy(ctx_, stream_, logits.data(), SEATRT_DEVICE_CPU, t_logits.data, dk, logits_bytes),
                 "copying logits");
    if (k_->stream_sync) check_status(model_.host(), k_->stream_sync(ctx_, stream_), "forward");
  } catch (...) {
    if (k_->stream_sync) model_.host()->status_free(k_->stream_sync(ctx_, stream_));
    release_step();
    throw;
  }
  release_step();
  length_ = seq_len;
  return logits;
}

int32_t argmax(std::span<const float> row) {
  int32_t best = 0;
  for (std::size_t i = 1; i < row.size(); ++i)
    if (row[i] > row[static_cast<std::size_t>(best)]) best = static_cast<int32_t>(i);
  return best;
}

EvalResult run_greedy(const LoadedModel& model, std::span<const int32_t> prompt, int32_t greedy_tokens) {
  SequenceDriver driver(model, static_cast<int32_t>(prompt.size()) + std::max(greedy_tokens, 0) + 1);
  EvalResult result;
  result.prompt_logits = driver.step(prompt, /*all_rows=*/true);
  const auto vocab = static_cast<std::size_t>(driver.vocab_size());
  std::span<const float> last(result.prompt_logits.data() + result.prompt_logits.size() - vocab, vocab);
  std::vector<float> next;
  for (int32_t i = 0; i < greedy_tokens; ++i) {
    const int32_t token = argmax(last);
    result.greedy.push_back(token);
    if (i + 1 == greedy_tokens) break;
    next = driver.step(std::span<const int32_t>(&token, 1), /*all_rows=*/false);
    last = std::span<const float>(next.data(), vocab);
  }
  return result;
}

}  // namespace seatrt::model
