// The load-time workspace reservation: the step batches it builds for the
// scheduler's limits (checked against the plan's pools: every slot in
// range and written once) and what reserve_workspace runs and measures,
// through a recording runner.
#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>

#include "engine/workspace_reserve.hpp"

using namespace seatrt::engine;

namespace {

// Gemma-4 26B-A4B's layers (25 sliding: 8 x 256, window 1024; 5 full: 2 x
// 512, one tensor), fp8, as the operator's seat plans them.
KvPlan a4b_plan(int64_t max_model_len, double context_multiple = 2.0) {
  KvPlanInput in;
  for (int i = 0; i < 30; ++i)
    in.layers.push_back(i % 6 == 5 ? KvLayerSpec{2, 512, 0, true} : KvLayerSpec{8, 256, 1024, false});
  in.dtype = KvDtype::fp8;
  in.block_size = 16;
  in.max_model_len = max_model_len;
  in.max_num_seqs = 32;
  in.max_num_batched_tokens = 8192;
  return plan_kv_pool(in, kv_bytes_for_context_multiple(in, context_multiple));
}

WorkspaceReserveLimits a4b_limits(int64_t max_model_len) {
  WorkspaceReserveLimits l;
  l.max_num_batched_tokens = 8192;
  l.max_num_seqs = 32;
  l.max_model_len = max_model_len;
  l.table_width = (max_model_len + 15) / 16 + 1;
  l.vocab_size = 262144;
  return l;
}

// Every token's slot lies in its pool and no two tokens share one.
void check_slots(const std::vector<int64_t>& slots, const KvGroup& group, int32_t block_size, size_t tokens) {
  REQUIRE(slots.size() == tokens);
  std::set<int64_t> seen;
  for (int64_t s : slots) {
    CHECK(s >= 0);
    CHECK(s < group.num_blocks * block_size);
    CHECK(seen.insert(s).second);
  }
}

class RecordingRunner : public ModelRunner {
 public:
  explicit RecordingRunner(uint64_t* free) : free_(free) {}
  int32_t vocab_size() const override { return 262144; }
  void forward(const StepBatch& batch, std::vector<float>& logits) override {
    if (fail_above > 0 && batch.num_tokens() > fail_above)
      throw std::runtime_error("cuda: cudaMalloc scratch of 999 bytes: cudaErrorMemoryAllocation (out of memory)");
    batches.push_back(batch);
    *free_ -= batch.max_query_len > 1 ? 1000 : 500;
    logits.clear();  // the logits stay on the device, as with a sampling provider
  }
  bool sample(std::span<const SampleInput> rows, std::vector<SampleResult>& out) override {
    // Copied now: the rows point into reserve_workspace's locals.
    for (const SampleInput& row : rows)
      sampled.push_back({row.prompt_tokens.size(), row.output_tokens.size(), row.allowed_mask.size(), *row.params});
    *free_ -= 24;
    out.assign(rows.size(), SampleResult{});
    return true;
  }
  std::vector<StepBatch> batches;
  struct SampledRow {
    size_t prompt_tokens, output_tokens, mask_words;
    SamplingParams params;
  };
  std::vector<SampledRow> sampled;
  int32_t fail_above = 0;

 private:
  uint64_t* free_;
};

}  // namespace

TEST_CASE("the reservation's prefill is max_num_batched_tokens in one sequence within max_model_len") {
  const KvPlan plan = a4b_plan(262144);
  const StepBatch b = reserve_prefill_batch(plan, a4b_limits(262144));
  CHECK(b.num_tokens() == 8192);
  CHECK(b.num_seqs == 1);
  CHECK(b.max_query_len == 8192);
  CHECK(b.seq_lens == std::vector<int32_t>{8192});
  CHECK(b.query_start == std::vector<int32_t>{0, 8192});
  CHECK(b.logits_index == std::vector<int32_t>{8191});
  for (int32_t i = 0; i < 8192; ++i) REQUIRE(b.positions[size_t(i)] == i);
  check_slots(b.slot_mapping, *plan.full, 16, 8192);
  check_slots(b.window_slot_mapping, *plan.windowed, 16, 8192);
}

TEST_CASE("the reservation's prefill splits at max_model_len into sequences of disjoint blocks") {
  const KvPlan plan = a4b_plan(3000, 4.0);  // the full pool holds 12,000 tokens
  const StepBatch b = reserve_prefill_batch(plan, a4b_limits(3000));
  CHECK(b.num_tokens() == 8192);
  CHECK(b.seq_lens == std::vector<int32_t>{3000, 3000, 2192});
  CHECK(b.positions[3000] == 0);  // the second sequence starts over
  check_slots(b.slot_mapping, *plan.full, 16, 8192);
  check_slots(b.window_slot_mapping, *plan.windowed, 16, 8192);
  CHECK(b.logits_index == std::vector<int32_t>{2999, 5999, 8191});
}

TEST_CASE("the reservation's decode step has one row per sequence over the full table width") {
  const KvPlan plan = a4b_plan(262144);
  const WorkspaceReserveLimits limits = a4b_limits(262144);
  const StepBatch b = reserve_decode_batch(plan, limits);
  const int64_t width = limits.table_width;
  CHECK(b.num_seqs == 32);
  CHECK(b.num_tokens() == 32);
  CHECK(b.max_query_len == 1);
  CHECK(b.max_blocks == width);
  CHECK(b.max_seq_len == width * 16);
  REQUIRE(b.block_tables.size() == size_t(32 * width));
  REQUIRE(b.window_block_tables.size() == size_t(32 * width));
  std::set<int32_t> first;
  for (int64_t s = 0; s < 32; ++s) {
    CHECK(b.seq_lens[size_t(s)] == 1);
    first.insert(b.block_tables[size_t(s * width)]);
    CHECK(b.block_tables[size_t(s * width + 1)] == -1);
    CHECK(b.block_tables[size_t(s * width + width - 1)] == -1);
    CHECK(b.window_block_tables[size_t(s * width)] == b.block_tables[size_t(s * width)]);
  }
  CHECK(first.size() == 32);
  check_slots(b.slot_mapping, *plan.full, 16, 32);
}

TEST_CASE("the reservation's steps are clamped to the pools' blocks") {
  KvPlan plan;
  plan.block_size = 16;
  plan.full = KvGroup{0, {0}, 64, 1024, 3};
  plan.windowed = KvGroup{32, {1}, 64, 1024, 5};
  WorkspaceReserveLimits limits = a4b_limits(4096);
  limits.max_num_batched_tokens = 1000;
  const StepBatch prefill = reserve_prefill_batch(plan, limits);
  CHECK(prefill.num_tokens() == 48);
  check_slots(prefill.slot_mapping, *plan.full, 16, 48);
  CHECK(reserve_decode_batch(plan, limits).num_seqs == 3);
}

TEST_CASE("reserve_workspace runs prefill, decode and worst-case sampling and measures what they leave") {
  uint64_t free = 1'000'000;
  RecordingRunner runner(&free);
  const KvPlan plan = a4b_plan(32768);
  const WorkspaceReserveLimits limits = a4b_limits(32768);
  const WorkspaceReservation r = reserve_workspace(runner, plan, limits, [&] { return free; });
  REQUIRE(runner.batches.size() == 2);
  CHECK(runner.batches[0].num_tokens() == 8192);
  CHECK(runner.batches[1].num_seqs == 32);
  CHECK(r.prefill_tokens == 8192);
  CHECK(r.decode_seqs == 32);
  CHECK(r.table_width == limits.table_width);
  CHECK(r.sampled);
  CHECK(r.bytes == 1000 + 500 + 24);
  REQUIRE(runner.sampled.size() == 32);
  for (const auto& row : runner.sampled) {
    CHECK(row.prompt_tokens + row.output_tokens == size_t(limits.max_model_len));
    CHECK(row.mask_words == size_t(262144 / 32));
    CHECK(row.params.temperature > 0.0f);
    CHECK(row.params.repetition_penalty != 1.0f);
    CHECK(row.params.presence_penalty != 0.0f);
    CHECK(row.params.num_top_logprobs == 20);
  }
  CHECK(describe(r).find("reserved by a prefill of 8192 tokens, a decode step of 32 sequences") != std::string::npos);
}

TEST_CASE("a reservation step that fails names the step and what to lower") {
  uint64_t free = 1'000'000;
  RecordingRunner runner(&free);
  runner.fail_above = 64;
  try {
    reserve_workspace(runner, a4b_plan(32768), a4b_limits(32768), [&] { return free; });
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("a prefill step of 8192 tokens") != std::string::npos);
    CHECK(msg.find("out of memory") != std::string::npos);
    CHECK(msg.find("kv_cache_memory") != std::string::npos);
    CHECK(msg.find("max_num_batched_tokens") != std::string::npos);
  }
}
