#include "workspace_reserve.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

#include "batch_builder.hpp"
#include "memory_plan.hpp"

namespace seatrt::engine {

namespace {

// Blocks one sequence may take from each pool the plan has.
int64_t blocks_per_pool(const KvPlan& plan) {
  int64_t blocks = INT64_MAX;
  if (plan.full) blocks = std::min(blocks, plan.full->num_blocks);
  if (plan.windowed) blocks = std::min(blocks, plan.windowed->num_blocks);
  return blocks == INT64_MAX ? 0 : blocks;
}

// Token ids spread over the vocabulary, away from the low special ids.
int32_t token_at(int64_t i, int32_t vocab) {
  const int64_t span = vocab > 8 ? vocab - 4 : std::max<int32_t>(vocab, 1);
  return static_cast<int32_t>((vocab > 8 ? 4 : 0) + (i * 7919) % span);
}

SequencePtr sequence_in_blocks(int64_t tokens, int64_t first_block, int32_t block_size, int32_t vocab) {
  auto seq = std::make_shared<Sequence>();
  for (int64_t i = 0; i < tokens; ++i) seq->tokens.push_back(token_at(first_block + i, vocab));
  seq->prompt_len = tokens;
  const int64_t blocks = (tokens + block_size - 1) / block_size;
  for (int64_t b = 0; b < blocks; ++b) {
    seq->full_blocks.push_back(static_cast<BlockId>(first_block + b));
    seq->window_blocks.push_back(static_cast<BlockId>(first_block + b));
  }
  return seq;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

StepBatch reserve_prefill_batch(const KvPlan& plan, const WorkspaceReserveLimits& limits) {
  // Sequences of at most max_model_len tokens (as the scheduler forms them)
  // in consecutive blocks, until the step holds max_num_batched_tokens
  // tokens, max_num_seqs sequences or the pools' blocks.
  const int64_t bs = plan.block_size;
  const int64_t per_seq = std::max<int64_t>(limits.max_model_len, 1);
  int64_t blocks_left = blocks_per_pool(plan);
  int64_t tokens_left = limits.max_num_batched_tokens;
  int64_t first_block = 0;
  StepPlan step;
  while (tokens_left > 0 && blocks_left > 0 && static_cast<int64_t>(step.chunks.size()) < limits.max_num_seqs) {
    const int64_t len = std::min({tokens_left, per_seq, blocks_left * bs});
    step.chunks.push_back({sequence_in_blocks(len, first_block, plan.block_size, limits.vocab_size), 0, len, true});
    step.num_tokens += len;
    const int64_t used = (len + bs - 1) / bs;
    first_block += used;
    blocks_left -= used;
    tokens_left -= len;
  }
  if (step.num_tokens == 0) throw std::invalid_argument("workspace reservation: no tokens fit the KV plan");
  return build_step_batch(step, plan.block_size, plan.full.has_value(), plan.windowed.has_value());
}

StepBatch reserve_decode_batch(const KvPlan& plan, const WorkspaceReserveLimits& limits) {
  const auto seqs = static_cast<int32_t>(std::min<int64_t>(limits.max_num_seqs, blocks_per_pool(plan)));
  if (seqs <= 0) throw std::invalid_argument("workspace reservation: no sequence fits the KV plan");
  StepPlan step;
  for (int32_t s = 0; s < seqs; ++s) step.chunks.push_back({sequence_in_blocks(1, s, plan.block_size, limits.vocab_size), 0, 1, true});
  step.num_tokens = seqs;
  StepBatch b = build_step_batch(step, plan.block_size, plan.full.has_value(), plan.windowed.has_value());
  // Widen the tables to the runner's full width, -1 padded, with
  // max_seq_len covering it: the shape of a decode step at max_model_len
  // (kernels bound each sequence's keys by seq_lens, as for graph replays).
  const int64_t width = std::max<int64_t>(limits.table_width, 1);
  const auto widen = [&](std::vector<int32_t>& table) {
    if (table.empty()) return;
    std::vector<int32_t> wide(static_cast<size_t>(seqs) * static_cast<size_t>(width), -1);
    for (int32_t s = 0; s < seqs; ++s) wide[static_cast<size_t>(s) * static_cast<size_t>(width)] = table[static_cast<size_t>(s)];
    table = std::move(wide);
  };
  widen(b.block_tables);
  widen(b.window_block_tables);
  b.max_blocks = static_cast<int32_t>(width);
  b.max_seq_len = static_cast<int32_t>(std::min<int64_t>(width * plan.block_size, INT32_MAX));
  return b;
}

WorkspaceReservation reserve_workspace(ModelRunner& runner, const KvPlan& plan, const WorkspaceReserveLimits& limits,
                                       const std::function<uint64_t()>& free_bytes) {
  WorkspaceReservation r;
  const StepBatch prefill = reserve_prefill_batch(plan, limits);
  const StepBatch decode = reserve_decode_batch(plan, limits);
  r.prefill_tokens = prefill.num_tokens();
  r.decode_seqs = decode.num_seqs;
  r.table_width = decode.max_blocks;
  const auto fail = [&](const char* what, const std::exception& e) {
    return std::runtime_error(std::string("reserving the kernel provider's working memory at load, ") + what + ": " +
                              e.what() +
                              " (if the device ran out of memory: the weights and the KV pool leave too little for "
                              "the largest step; lower [cache] kv_cache_memory or [scheduler] "
                              "max_num_batched_tokens / max_num_seqs)");
  };
  const uint64_t before = free_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> logits;
  try {
    runner.forward(prefill, logits);
  } catch (const std::exception& e) {
    throw fail(("a prefill step of " + std::to_string(r.prefill_tokens) + " tokens").c_str(), e);
  }
  try {
    runner.forward(decode, logits);
  } catch (const std::exception& e) {
    throw fail(("a decode step of " + std::to_string(r.decode_seqs) + " sequences").c_str(), e);
  }
  // Sampling with every option that takes memory on the device.
  SamplingParams params;
  params.temperature = 0.8f;
  params.top_p = 0.95f;
  params.top_k = 50;
  params.min_p = 0.05f;
  params.presence_penalty = 0.5f;
  params.frequency_penalty = 0.5f;
  params.repetition_penalty = 1.1f;
  params.seed = 1;
  params.num_top_logprobs = 20;
  const int64_t history = std::max<int64_t>(limits.max_model_len - 1, 1);
  std::vector<int32_t> prompt(static_cast<size_t>(history));
  for (int64_t i = 0; i < history; ++i) prompt[static_cast<size_t>(i)] = token_at(i, limits.vocab_size);
  const std::vector<int32_t> output(1, token_at(history, limits.vocab_size));
  const std::vector<uint32_t> mask(static_cast<size_t>((limits.vocab_size + 31) / 32), 0xFFFFFFFFu);
  std::vector<SampleInput> rows(static_cast<size_t>(r.decode_seqs));
  const auto vocab = static_cast<size_t>(limits.vocab_size);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].params = &params;
    rows[i].step = 1;
    rows[i].prompt_tokens = prompt;
    rows[i].output_tokens = output;
    rows[i].allowed_mask = mask;
    if (!logits.empty()) rows[i].logits = std::span<const float>(logits.data() + i * vocab, vocab);
  }
  std::vector<SampleResult> sampled;
  try {
    r.sampled = runner.sample(rows, sampled);
  } catch (const std::exception& e) {
    throw fail(("sampling " + std::to_string(r.decode_seqs) + " rows").c_str(), e);
  }
  r.ms = ms_since(t0);
  r.free_after = free_bytes();
  r.bytes = before > r.free_after ? before - r.free_after : 0;
  return r;
}

std::string describe(const WorkspaceReservation& r) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.0f", r.ms);
  return "kernel provider workspace " + bytes_and_gib(r.bytes) + ", reserved by a prefill of " +
         std::to_string(r.prefill_tokens) + " tokens, a decode step of " + std::to_string(r.decode_seqs) + " sequences over " +
         std::to_string(r.table_width) + " blocks" + (r.sampled ? " and device sampling" : "") + " in " + ms + " ms";
}

}  // namespace seatrt::engine
