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

// A callback slower than slow_callback_s leaves the engine thread.  The
// slow callbacks here sleep past it (a sleep lasts at least that long); a
// callback that does nothing must not cross it even on a loaded machine,
// so the threshold is far above a scheduling delay where a test counts
// which sequences became slow.
EngineConfig config(double slow_callback_s = 0.010) {
  EngineConfig c{{4, 64, 64}, 64};
  c.slow_callback_s = slow_callback_s;
  return c;
}

struct Outcome {
  std::vector<int32_t> tokens;
  FinishInfo info;
};

// How a run's on_token behaves: sleeps (the first call and the others apart),
// waits for a gate from its gate_at-th call on (telling `at_gate` when it
// first does), stops or throws.
struct Behaviour {
  int first_sleep_ms = 0;
  int sleep_ms = 0;
  std::shared_future<void> gate;  // when valid: calls from gate_at on wait for it
  size_t gate_at = 0;
  int stop_after = -1;  // returns false after this many tokens (-1: never)
  bool throw_at_3 = false;
};

struct Run {
  std::shared_ptr<Outcome> out = std::make_shared<Outcome>();
  std::future<void> done;
  std::atomic<bool> in_token{false};
  std::atomic<size_t> count{0};  // tokens seen, readable while the run goes on
  std::atomic<bool> overlapped{false};  // on_finish ran while on_token did
  std::promise<void> at_gate;           // set when a call first waits at the gate
  std::atomic<bool> at_gate_told{false};
};

// Waits for a future the test's own events make ready; a minute means the
// engine is stuck (a failure, not a slow machine).
template <typename F>
bool ready_within_a_minute(F& f) {
  return f.wait_for(std::chrono::minutes(1)) == std::future_status::ready;
}

// Submits a greedy generation of `max_new` tokens behaving as `b`; returns its id.
int64_t submit(Engine& engine, Run& run, int64_t max_new, Behaviour b,
               std::function<std::vector<uint32_t>()> mask = {}) {
  auto promise = std::make_shared<std::promise<void>>();
  run.done = promise->get_future();
  GenerationRequest r;
  r.prompt = {1, 2, 3};
  r.max_new_tokens = max_new;
  r.sampling.temperature = 0.0f;
  r.allowed_mask = std::move(mask);
  auto out = run.out;
  Run* rp = &run;
  r.on_token = [out, rp, b](const TokenEvent& e) {
    rp->in_token = true;
    if (b.gate.valid() && rp->count >= b.gate_at) {
      if (!rp->at_gate_told.exchange(true)) rp->at_gate.set_value();
      b.gate.wait();
    }
    const int ms = rp->count == 0 ? b.first_sleep_ms : b.sleep_ms;
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    out->tokens.push_back(e.token);
    ++rp->count;
    rp->in_token = false;
    if (b.throw_at_3 && out->tokens.size() == 3) throw std::runtime_error("parser broke");
    return b.stop_after < 0 || static_cast<int>(out->tokens.size()) < b.stop_after;
  };
  r.on_finish = [out, rp, promise](const FinishInfo& info) {
    if (rp->in_token) rp->overlapped = true;
    out->info = info;
    promise->set_value();
  };
  int64_t id = 0;
  REQUIRE(engine.submit(std::move(r), &id) == SubmitStatus::accepted);
  return id;
}

std::vector<int32_t> alone(int64_t max_new) {
  Engine engine(config(), plan(), std::make_unique<LengthModel>());
  Run r;
  submit(engine, r, max_new, {});
  r.done.get();
  return r.out->tokens;
}

}  // namespace

TEST_CASE("a slow output callback delays only its own sequence, which keeps its tokens") {
  const auto expected = alone(6);
  Engine engine(config(0.2), plan(), std::make_unique<LengthModel>());
  Run slow, fast;
  // The slow run's first callback (on the engine thread) makes it slow; its
  // second, off the engine thread, holds until the fast run is done.  Were
  // it still on the engine thread, the fast run could never finish.
  std::promise<void> fast_finished;
  Behaviour slow_behaviour;
  slow_behaviour.first_sleep_ms = 250;
  slow_behaviour.gate = fast_finished.get_future().share();
  slow_behaviour.gate_at = 1;
  submit(engine, slow, 6, slow_behaviour);
  submit(engine, fast, 40, {});
  REQUIRE(ready_within_a_minute(fast.done));
  CHECK(slow.count == 1);  // the fast run went on while the slow one held
  fast_finished.set_value();
  slow.done.get();
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
  Behaviour slow;
  slow.first_sleep_ms = slow.sleep_ms = 15;
  // Only token 9, from a mask computed beside each offloaded callback.
  submit(engine, masked, 6, slow, [] {
    std::vector<uint32_t> m(1, 0u);
    m[0] = 1u << 9;
    return m;
  });
  Behaviour stops = slow;
  stops.stop_after = 4;
  submit(engine, stopped, 20, stops);
  Behaviour throws = slow;
  throws.throw_at_3 = true;
  submit(engine, failing, 20, throws);
  submit(engine, fast, 10, {});
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
  // Made slow by its first callback; its third (offloaded) holds until the
  // cancel has been sent.
  std::promise<void> cancel_sent;
  Behaviour b;
  b.first_sleep_ms = 40;
  b.gate = cancel_sent.get_future().share();
  b.gate_at = 2;
  const int64_t id = submit(engine, slow, 30, b);
  slow.at_gate.get_future().wait();
  engine.cancel(id);
  cancel_sent.set_value();
  slow.done.get();
  CHECK(slow.out->info.reason == FinishReason::cancelled);
  CHECK_FALSE(slow.overlapped);
  CHECK(slow.out->tokens.size() >= 3);  // the callback in flight completes
  CHECK(slow.out->tokens.size() < 30);
  CHECK(engine.stats().blocks_used == 0);
}

TEST_CASE("a sequence preempted while its offloaded callback runs waits for it, then goes on") {
  // Five blocks of 4: the fast sequence's 3 + 16 tokens need all of them,
  // so it must preempt the slow one (the youngest, holding 2) to finish.
  // The slow one's second callback, off the engine thread, holds until the
  // fast one is done: the preemption happens while it runs, and the slow
  // one must then wait, not be failed as a request that does not fit.
  Engine engine(config(), test::full_plan(5, 4, 64), std::make_unique<LengthModel>());
  Run fast, slow;
  // Fast's first callback waits until slow is queued, so fast cannot finish
  // before slow arrives (then nothing would preempt).
  std::promise<void> slow_queued, fast_finished;
  Behaviour fast_behaviour;
  fast_behaviour.gate = slow_queued.get_future().share();
  Behaviour slow_behaviour;
  slow_behaviour.first_sleep_ms = 40;
  slow_behaviour.gate = fast_finished.get_future().share();
  slow_behaviour.gate_at = 1;
  submit(engine, fast, 16, fast_behaviour);
  submit(engine, slow, 4, slow_behaviour);
  slow_queued.set_value();
  REQUIRE(ready_within_a_minute(fast.done));
  fast_finished.set_value();
  slow.done.get();
  CHECK(fast.out->info.reason == FinishReason::length);
  CHECK(slow.out->info.reason == FinishReason::length);
  CHECK(slow.out->info.error.empty());
  CHECK(slow.out->tokens.size() == 4);
  CHECK_FALSE(slow.overlapped);
  CHECK(engine.stats().preemptions > 0);
}
