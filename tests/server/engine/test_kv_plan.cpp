// KV pool sizing: bytes per token derived per layer, windowed reservation,
// the reverse conversion, and the operator's log line.  Expected numbers
// are worked out by hand below from the Gemma-4 26B-A4B layer table
// (25 sliding layers: 8 kv heads x 256, window 1024; 5 full layers: 2 kv
// heads x 512, K = V stored once).
#include <catch2/catch.hpp>

#include "engine/kv_plan.hpp"

using namespace seatrt::engine;

namespace {
KvPlanInput gemma4_a4b(KvDtype dtype) {
  KvPlanInput in;
  for (int i = 0; i < 30; ++i) {
    const bool full = i % 6 == 5;
    in.layers.push_back(full ? KvLayerSpec{2, 512, 0, true} : KvLayerSpec{8, 256, 1024, false});
  }
  in.dtype = dtype;
  in.block_size = 16;
  in.max_model_len = 262144;
  in.max_num_seqs = 32;
  in.max_num_batched_tokens = 8192;
  return in;
}
}  // namespace

TEST_CASE("per-layer bytes per token for the Gemma-4 A4B layout") {
  const auto plan = plan_kv_pool(gemma4_a4b(KvDtype::fp8), 9'114'000'000ull);
  REQUIRE(plan.full);
  REQUIRE(plan.windowed);
  // full: 5 layers x 1 tensor x 2 heads x 512 x 1 byte
  CHECK(plan.full->bytes_per_token == 5120);
  // sliding: 25 layers x 2 tensors x 8 heads x 256 x 1 byte
  CHECK(plan.windowed->bytes_per_token == 102400);
  CHECK(plan.windowed->window == 1024);
  // window blocks: 32 seqs x (ceil(1023/16) + 2) + 8192/16 = 32*66 + 512
  CHECK(plan.windowed->num_blocks == 32 * 66 + 512);
  const uint64_t window_bytes = uint64_t(32 * 66 + 512) * 102400 * 16;
  CHECK(plan.full->num_blocks == int64_t((9'114'000'000ull - window_bytes) / (5120 * 16)));
  CHECK(plan.capacity_tokens == plan.full->num_blocks * 16);
  CHECK(plan.context_multiple == Approx(double(plan.capacity_tokens) / 262144.0));
  CHECK(plan.pool_bytes <= 9'114'000'000ull);
}

TEST_CASE("bf16 doubles every layer's bytes") {
  const auto fp8 = plan_kv_pool(gemma4_a4b(KvDtype::fp8), 20'000'000'000ull);
  const auto bf16 = plan_kv_pool(gemma4_a4b(KvDtype::bf16), 20'000'000'000ull);
  CHECK(bf16.full->bytes_per_token == 2 * fp8.full->bytes_per_token);
  CHECK(bf16.windowed->bytes_per_token == 2 * fp8.windowed->bytes_per_token);
  CHECK(bf16.capacity_tokens < fp8.capacity_tokens);
}

TEST_CASE("context multiple and bytes convert both ways") {
  const auto in = gemma4_a4b(KvDtype::fp8);
  const uint64_t bytes = kv_bytes_for_context_multiple(in, 2.0);
  const auto plan = plan_kv_pool(in, bytes);
  CHECK(plan.capacity_tokens == 2 * 262144);
  CHECK(plan.context_multiple == Approx(2.0));
  CHECK(plan.pool_bytes == bytes);
}

TEST_CASE("a pool too small names both numbers and what to change") {
  try {
    plan_kv_pool(gemma4_a4b(KvDtype::fp8), 1'000'000'000ull);
    FAIL("expected an error");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.find("1000000000") != std::string::npos);
    CHECK(msg.find("kv_cache_memory") != std::string::npos);
    CHECK(msg.find("max_num_seqs") != std::string::npos);
  }
}

TEST_CASE("the log line has the operator's format") {
  KvPlanInput in;
  in.layers = {{1, 4, 0, false}};
  in.dtype = KvDtype::bf16;  // 2 * 4 * 2 = 16 bytes per token
  in.block_size = 16;
  in.max_model_len = 100;
  in.max_num_seqs = 2;
  const auto plan = plan_kv_pool(in, 16 * 16 * 13);  // 13 blocks = 208 tokens
  CHECK(plan.capacity_tokens == 208);
  CHECK(describe(plan).rfind("KV pool 208 tokens, 2.08\xC3\x97 max context", 0) == 0);
}

TEST_CASE("bad layer specs and dtypes are refused by name") {
  KvPlanInput in;
  in.layers = {{0, 4, 0, false}};
  in.max_model_len = 10;
  CHECK_THROWS_WITH(plan_kv_pool(in, 1 << 20), Catch::Contains("KV layer 0"));
  CHECK_THROWS_WITH(parse_kv_dtype("fp16"), Catch::Contains("fp16"));
}
