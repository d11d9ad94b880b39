// A request whose output callback (a parser plugin's feed) is slow delays
// only itself: after one slow call its later callbacks run off the engine
// thread, one at a time and in order, and the sequence waits for each while
// the others go on.  Its tokens, its mask, a stop, a cancel and a failure
// keep their meaning.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/engine.hpp"
#include "engine_test_support.hpp"

using namespace seatrt::engine;

namespace {

constexpr int32_t kVocab = 23;

// The next token's logits depend on the sequence's length only, so a
// greedy sequence's tokens are fixed whatever runs beside it.
class LengthModel : public ModelRunner {
 public:
  int32_t vocab_size() const override { return kVocab; }
  void forward(const StepBatch& b, std::vector<float>& logits) override {
    logits.clear();
    for (int32_t row : b.logits_index) {
      size_t s = 0;
      while (b.query_start[s + 1] <= row) ++s;
      const int32_t len = b.seq_lens[s];
      for (int32_t v = 0; v < kVocab; ++v) logits.push_back(static_cast<float>((v * 7 + len * 3) % kVocab));
    }
  }
};

KvPlan plan() { return test::full_plan(64, 4, 64); }

EngineConfig config() {
  EngineConfig c{{4, 64, 64}, 64};
  c.slow_callback_s = 0.010;
  return c;
}

struct Outcome {
  std::vector<int32_t> tokens;
  FinishInfo info;
};

struct Run {
  std::shared_ptr<Outcome> out = std::make_shared<Outcome>();
  std::future<void> done;
  std::atomic<bool> in_token{false};
  std::atomic<size_t> count{0};  // tokens seen, readable while the run goes on
  std::atomic<bool> overlapped{false};  // on_finish ran while on_token did
  std::shared_future<void> gate;  // when valid, on_token waits for it first
};

// Submits a greedy generation whose on_token sleeps `sleep_ms` and returns
// false after `stop_after` tokens (-1: never).
void submit(Engine& engine, Run& run, int64_t max_new, int sleep_ms, int stop_after = -1,
            std::function<std::vector<uint32_t>()> mask = {}, bool throw_at_3 = false) {
  auto promise = std::make_shared<std::promise<void>>();
  run.done = promise->get_future();
  GenerationRequest r;
  r.prompt = {1, 2, 3};
  r.max_new_tokens = max_new;
  r.sampling.temperature = 0.0f;
  r.allowed_mask = std::move(mask);
  auto out = run.out;
  Run* rp = &run;
  r.on_token = [out, rp, sleep_ms, stop_after, throw_at_3](const TokenEvent& e) {
    if (rp->gate.valid()) rp->gate.wait();
    rp->in_token = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    out->tokens.push_back(e.token);
    ++rp->count;
    rp->in_token = false;
    if (throw_at_3 && out->tokens.size() == 3) throw std::runtime_error("parser broke");
    return stop_after < 0 || static_cast<int>(out->tokens.size()) < stop_after;
  };
  r.on_finish = [out, rp, promise](const FinishInfo& info) {
    if (rp->in_token) rp->overlapped = true;
    out->info = info;
    promise->set_value();
  };
  REQUIRE(engine.submit(std::move(r), nullptr) == SubmitStatus::accepted);
}

std::vector<int32_t> alone(int64_t max_new) {
  Engine engine(config(), plan(), std::make_unique<LengthModel>());
  Run r;
  submit(engine, r, max_new, 0);
  r.done.get();
  return r.out->tokens;
}

}  // namespace

TEST_CASE("a slow output callback delays only its own sequence, which keeps its tokens") {
  const auto expected = alone(12);
  Engine engine(config(), plan(), std::make_unique<LengthModel>());
  Run slow, fast;
  submit(engine, slow, 12, 40);
  submit(engine, fast, 40, 0);
  fast.done.get();
  const size_t slow_by_then = slow.count;  // when fast finished
  slow.done.get();
  // 40 fast tokens beside a callback of 40 ms: inline it would have held
  // every step, so the slow one would have most of its 12 by then.
  CHECK(slow_by_then < 6);
  CHECK(slow.out->tokens == expected);
  CHECK(slow.out->info.reason == FinishReason::length);
  CHECK(fast.out->tokens.size() == 40);
  CHECK_FALSE(slow.overlapped);
  CHECK(engine.stats().slow_callback_sequences == 1);
  CHECK(engine.stats().blocks_used == 0);
}

TEST_CASE("an offloaded sequence still obeys its mask, stops when told, and fails alone") {
  Engine engine(config(), plan(), std::make_unique<LengthModel>());
  Run masked, stopped, failing, fast;
  // Only token 9, from a mask computed beside each offloaded callback.
  submit(engine, masked, 6, 15, -1, [] {
    std::vector<uint32_t> m(1, 0u);
    m[0] = 1u << 9;
    return m;
  });
  submit(engine, stopped, 20, 15, 4);
  submit(engine, failing, 20, 15, -1, {}, true);
  submit(engine, fast, 10, 0);
  masked.done.get();
  stopped.done.get();
  failing.done.get();
  fast.done.get();
  CHECK(masked.out->tokens == std::vector<int32_t>(6, 9));
  CHECK(stopped.out->tokens.size() == 4);  // nothing after the callback said stop
  CHECK(stopped.out->info.reason == FinishReason::stop);
  CHECK(failing.out->info.reason == FinishReason::error);
  CHECK_THAT(failing.out->info.error, Catch::Contains("parser broke"));
  CHECK(failing.out->tokens.size() == 3);
  CHECK(fast.out->info.reason == FinishReason::length);
  for (Run* r : {&masked, &stopped, &failing}) CHECK_FALSE(r->overlapped);
}

TEST_CASE("cancelling a sequence while its offloaded callback runs finishes it after the callback") {
  Engine engine(config(), plan(), std::make_unique<LengthModel>());
  Run slow;
  submit(engine, slow, 30, 60);
  // Let it become slow and offloaded, then cancel in the middle of a callback.
  while (slow.count < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  while (!slow.in_token) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  engine.cancel(1);
  slow.done.get();
  CHECK(slow.out->info.reason == FinishReason::cancelled);
  CHECK_FALSE(slow.overlapped);
  CHECK(slow.out->tokens.size() < 30);
  CHECK(engine.stats().blocks_used == 0);
}

TEST_CASE("a sequence preempted while its offloaded callback runs waits for it, then goes on") {
  // Five blocks of 4: the fast sequence's 3 + 16 tokens need all of them,
  // so it preempts the slow one (the youngest) while its callback runs.
  // Nothing else runs then; the slow one must wait, not be failed as a
  // request that does not fit.
  Engine engine(config(), test::full_plan(5, 4, 64), std::make_unique<LengthModel>());
  Run fast, slow;
  // Fast's first callback waits until slow is queued, so a loaded machine
  // cannot finish fast before slow arrives (then nothing would preempt).
  std::promise<void> slow_queued;
  fast.gate = slow_queued.get_future().share();
  submit(engine, fast, 16, 0);
  submit(engine, slow, 4, 150);
  slow_queued.set_value();
  fast.done.get();
  slow.done.get();
  CHECK(fast.out->info.reason == FinishReason::length);
  CHECK(slow.out->info.reason == FinishReason::length);
  CHECK(slow.out->info.error.empty());
  CHECK(slow.out->tokens.size() == 4);
  CHECK_FALSE(slow.overlapped);
  CHECK(engine.stats().preemptions > 0);
}
