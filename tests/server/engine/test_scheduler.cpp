// Scheduler + KV manager: chunked prefill within the token budget, decodes
// first, prefix reuse, window block recycling, preemption when short.
#include <catch2/catch.hpp>

#include <numeric>

#include "engine/scheduler.hpp"

using namespace seatrt::engine;

namespace {
KvPlan small_plan(int64_t full_blocks, int64_t window_blocks, int32_t window) {
  KvPlan p;
  p.block_size = 4;
  p.full = KvGroup{0, {0}, 8, 32, full_blocks};
  if (window_blocks > 0) p.windowed = KvGroup{window, {1}, 8, 32, window_blocks};
  p.max_model_len = 64;
  return p;
}
SequencePtr make_seq(int64_t id, int n, int first = 0) {
  auto s = std::make_shared<Sequence>();
  s->id = id;
  s->tokens.resize(static_cast<size_t>(n));
  std::iota(s->tokens.begin(), s->tokens.end(), first);
  s->prompt_len = n;
  return s;
}
void complete(StepPlan& plan, KvManager& kv) {
  for (auto& c : plan.chunks) {
    c.seq->num_computed += c.count;
    kv.commit(*c.seq);
    if (c.needs_logits) c.seq->tokens.push_back(7);
  }
}
}  // namespace

TEST_CASE("prefill is chunked by the token budget and decodes go first") {
  KvManager kv(small_plan(64, 0, 0));
  Scheduler s({4, 8, 16}, kv);
  auto a = make_seq(1, 10), b = make_seq(2, 3, 100);
  s.enqueue(a);
  auto p1 = s.schedule();
  REQUIRE(p1.chunks.size() == 1);
  CHECK(p1.chunks[0].count == 8);
  CHECK_FALSE(p1.chunks[0].needs_logits);
  complete(p1, kv);
  s.enqueue(b);
  auto p2 = s.schedule();
  REQUIRE(p2.chunks.size() == 2);
  CHECK(p2.chunks[0].seq == a);  // the running sequence first
  CHECK(p2.chunks[0].count == 2);
  CHECK(p2.chunks[0].needs_logits);
  CHECK(p2.chunks[1].count == 3);
  complete(p2, kv);
  auto p3 = s.schedule();
  REQUIRE(p3.chunks.size() == 2);
  CHECK(p3.chunks[0].count == 1);  // decode
  CHECK(p3.chunks[1].count == 1);
}

TEST_CASE("a shared prompt prefix is reused from the cache") {
  KvManager kv(small_plan(64, 0, 0));
  Scheduler s({4, 64, 16}, kv);
  auto a = make_seq(1, 10);
  s.enqueue(a);
  auto p = s.schedule();
  complete(p, kv);
  s.remove(a);
  CHECK(kv.blocks_used() == 0);
  auto b = make_seq(2, 10);
  s.enqueue(b);
  auto p2 = s.schedule();
  REQUIRE(p2.chunks.size() == 1);
  CHECK(p2.chunks[0].start == 8);  // two full blocks of 4 cached
  CHECK(b->cached_prompt_tokens == 8);
}

TEST_CASE("window blocks are released as the window slides") {
  KvManager kv(small_plan(64, 64, 4));
  auto a = make_seq(1, 16);
  REQUIRE(kv.allocate(*a, 16));
  CHECK(kv.window_pool()->num_used() == 4);
  a->num_computed = 16;
  REQUIRE(kv.allocate(*a, 1));
  // Position 16 needs positions 13..16: blocks 0-2 are out of the window.
  CHECK(a->window_blocks[0] == -1);
  CHECK(a->window_blocks[2] == -1);
  CHECK(a->window_blocks[3] >= 0);
  CHECK(kv.window_pool()->num_used() == 2);
  CHECK(kv.full_pool()->num_used() == 5);
  kv.free(*a);
  CHECK(kv.blocks_used() == 0);
}

TEST_CASE("when the pool is short the youngest sequence is preempted and recomputed") {
  KvManager kv(small_plan(5, 0, 0));  // 20 tokens
  Scheduler s({4, 64, 16}, kv);
  auto a = make_seq(1, 8), b = make_seq(2, 8, 50);
  s.enqueue(a);
  s.enqueue(b);
  auto p = s.schedule();
  REQUIRE(p.chunks.size() == 2);
  complete(p, kv);  // 9 tokens each: 3 blocks each needed next step, 6 > 5
  auto p2 = s.schedule();
  CHECK(p2.preempted == 1);
  REQUIRE(p2.chunks.size() == 1);
  CHECK(p2.chunks[0].seq == a);
  CHECK(b->num_computed == 0);
  CHECK(b->preemptions == 1);
  CHECK(s.waiting().front() == b);
  complete(p2, kv);
  s.remove(a);
  auto p3 = s.schedule();
  REQUIRE(p3.chunks.size() == 1);
  CHECK(p3.chunks[0].seq == b);
  CHECK(p3.chunks[0].start == 8);  // its committed prompt blocks were still cached
  CHECK(p3.chunks[0].count == 1);
}

