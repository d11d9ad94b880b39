// The engine loop against a fake model that reads every token of its
// context back through the block tables (so paging mistakes change the
// output): concurrent sequences under preemption produce exactly what each
// produces alone; cancellation frees blocks; non-finite logits fail the
// request with a clear error and are counted.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <mutex>
#include <thread>

#include "engine/engine.hpp"
#include "engine_test_support.hpp"

using namespace seatrt::engine;

namespace {

constexpr int32_t kVocab = 31;  // token 31 (poison) only ever comes from a prompt

// Stores each token id at its cache slot; logits for a row are a hash of
// every token the sequence has, read from the cache via its block table.
class PagedEchoModel : public ModelRunner {
 public:
  PagedEchoModel(int64_t slots, int32_t block_size) : cache_(static_cast<size_t>(slots), -1), bs_(block_size) {}
  int32_t vocab_size() const override { return kVocab; }
  void forward(const StepBatch& b, std::vector<float>& logits) override {
    for (int32_t t = 0; t < b.num_tokens(); ++t)
      cache_.at(static_cast<size_t>(b.slot_mapping[static_cast<size_t>(t)])) = b.token_ids[static_cast<size_t>(t)];
    logits.clear();
    for (int32_t row : b.logits_index) {
      int32_t s = 0;
      while (b.query_start[static_cast<size_t>(s) + 1] <= row) ++s;
      uint64_t h = 1469598103934665603ull;
      bool poison = false;
      for (int32_t pos = 0; pos < b.seq_lens[static_cast<size_t>(s)]; ++pos) {
        const int32_t block = b.block_tables[static_cast<size_t>(s * b.max_blocks + pos / bs_)];
        const int32_t tok = cache_.at(static_cast<size_t>(block * bs_ + pos % bs_));
        if (tok == 31) poison = true;
        h = (h ^ static_cast<uint64_t>(tok + 1)) * 1099511628211ull;
      }
      for (int32_t v = 0; v < kVocab; ++v) {
        const uint64_t x = (h ^ static_cast<uint64_t>(v)) * 0x9e3779b97f4a7c15ull;
        logits.push_back(poison ? std::numeric_limits<float>::quiet_NaN()
                                : static_cast<float>((x >> 40) % 1000) / 250.0f);
      }
    }
  }

 private:
  std::vector<int32_t> cache_;
  int32_t bs_;
};

// PagedEchoModel whose steps wait until the test opens the gate: what the
// test does before that (e.g. cancel) happens while the request is still
// running, whatever the machine's speed.
class GatedEchoModel : public PagedEchoModel {
 public:
  GatedEchoModel(int64_t slots, int32_t block_size, std::shared_future<void> gate)
      : PagedEchoModel(slots, block_size), gate_(std::move(gate)) {}
  void forward(const StepBatch& b, std::vector<float>& logits) override {
    gate_.wait();
    PagedEchoModel::forward(b, logits);
  }

 private:
  std::shared_future<void> gate_;
};

KvPlan plan_with(int64_t blocks) {
  KvPlan p;
  p.block_size = 4;
  p.full = KvGroup{0, {0}, 8, 32, blocks};
  p.max_model_len = 64;
  return p;
}

using test::Outcome;

// Submits a sampled generation; `outcome` receives its tokens and finish.
SubmitStatus submit(Engine& engine, std::vector<int32_t> prompt, uint64_t seed, int64_t max_new,
                    std::future<Outcome>& outcome, int64_t* id_out = nullptr) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_new_tokens = max_new;
  r.sampling.temperature = 0.8f;
  r.sampling.seed = seed;
  SubmitStatus status{};
  outcome = test::submit_collecting(engine, std::move(r), &status, id_out);
  return status;
}

std::future<Outcome> run(Engine& engine, std::vector<int32_t> prompt, uint64_t seed, int64_t max_new,
                         int64_t* id_out = nullptr) {
  std::future<Outcome> outcome;
  REQUIRE(submit(engine, std::move(prompt), seed, max_new, outcome, id_out) == SubmitStatus::accepted);
  return outcome;
}

std::vector<int32_t> prompt_for(int i) {
  std::vector<int32_t> p;
  for (int k = 0; k < 5 + i % 7; ++k) p.push_back((i * 7 + k * 3) % 30);
  return p;
}

}  // namespace

TEST_CASE("concurrent sequences under preemption equal each sequence run alone") {
  std::vector<std::vector<int32_t>> alone;
  {
    Engine engine({{1, 64, 64}, 64}, plan_with(40), std::make_unique<PagedEchoModel>(160, 4));
    for (int i = 0; i < 12; ++i) alone.push_back(run(engine, prompt_for(i), 1000u + unsigned(i), 20).get().tokens);
  }
  Engine engine({{12, 24, 64}, 64}, plan_with(24), std::make_unique<PagedEchoModel>(96, 4));
  std::vector<std::future<Outcome>> futures;
  for (int i = 0; i < 12; ++i) futures.push_back(run(engine, prompt_for(i), 1000u + unsigned(i), 20));
  for (int i = 0; i < 12; ++i) {
    auto o = futures[static_cast<size_t>(i)].get();
    CHECK(o.info.reason == FinishReason::length);
    CHECK(o.tokens == alone[static_cast<size_t>(i)]);
    // No two prompts share a block: a preempted sequence finding its own
    // blocks again is no cache hit for the client.
    CHECK(o.info.cached_prompt_tokens == 0);
  }
  CHECK(engine.stats().preemptions > 0);
  CHECK(engine.stats().blocks_used == 0);
}

TEST_CASE("cancelling a sequence frees its blocks") {
  // The model's steps wait for the gate, so the cancel lands while the
  // request runs (before, a fast machine could finish its 50 tokens first).
  std::promise<void> gate;
  Engine engine({{4, 64, 64}, 64}, plan_with(40),
                std::make_unique<GatedEchoModel>(160, 4, gate.get_future().share()));
  int64_t id = 0;
  auto f = run(engine, prompt_for(3), 5, 50, &id);
  engine.cancel(id);
  gate.set_value();
  auto o = f.get();
  CHECK(o.info.reason == FinishReason::cancelled);
  // finish() publishes the freed blocks before on_finish runs.
  CHECK(engine.stats().blocks_used == 0);
}

TEST_CASE("non-finite logits fail the request, naming the step, and are counted") {
  Engine engine({{4, 64, 64}, 64}, plan_with(40), std::make_unique<PagedEchoModel>(160, 4));
  auto o = run(engine, {1, 2, 31}, 5, 10).get();
  CHECK(o.info.reason == FinishReason::error);
  CHECK_THAT(o.info.error, Catch::Contains("non-finite logits") && Catch::Contains("output token 0"));
  CHECK(o.tokens.empty());
  CHECK(engine.stats().non_finite == 1);
}

TEST_CASE("a full queue refuses submissions; draining refuses everything") {
  Engine engine({{1, 64, 0}, 64}, plan_with(40), std::make_unique<PagedEchoModel>(160, 4));
  GenerationRequest r;
  r.prompt = {1, 2};
  CHECK(engine.submit(r, nullptr) == SubmitStatus::queue_full);
  engine.stop_accepting();
  CHECK(engine.submit(r, nullptr) == SubmitStatus::draining);
}

TEST_CASE("a request the queue admitted is never refused later, even under preemption") {
  // Two running sequences need more blocks than the pool has, so they
  // preempt each other back into the short queue while submitters race it.
  Engine engine({{2, 64, 2}, 64}, plan_with(12), std::make_unique<PagedEchoModel>(48, 4));
  std::mutex m;
  std::vector<std::future<Outcome>> admitted;
  int refused = 0;
  std::vector<std::thread> submitters;
  for (int t = 0; t < 6; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        std::future<Outcome> outcome;
        const auto status = submit(engine, prompt_for(t * 25 + i), static_cast<uint64_t>(t * 25 + i), 20, outcome);
        std::lock_guard lock(m);
        if (status == SubmitStatus::accepted) admitted.push_back(std::move(outcome));
        else ++refused;
      }
    });
  }
  for (auto& th : submitters) th.join();
  CHECK(refused > 0);
  REQUIRE(!admitted.empty());
  for (auto& f : admitted) {
    const auto o = f.get();
    INFO(o.info.error);
    CHECK(o.info.reason == FinishReason::length);
  }
  CHECK(engine.stats().preemptions > 0);
  // finish() publishes the freed blocks before on_finish runs.
  CHECK(engine.stats().blocks_used == 0);
}

TEST_CASE("a callback that throws fails its request, not the engine") {
  Engine engine({{4, 64, 64}, 64}, plan_with(40), std::make_unique<PagedEchoModel>(160, 4));
  auto promise = std::make_shared<std::promise<FinishInfo>>();
  GenerationRequest r;
  r.prompt = {1, 2, 3};
  r.max_new_tokens = 5;
  r.on_token = [](const TokenEvent&) -> bool { throw std::runtime_error("parser exploded"); };
  r.on_finish = [promise](const FinishInfo& info) { promise->set_value(info); };
  REQUIRE(engine.submit(std::move(r), nullptr) == SubmitStatus::accepted);
  const auto info = promise->get_future().get();
  CHECK(info.reason == FinishReason::error);
  CHECK_THAT(info.error, Catch::Contains("parser exploded"));
  // The engine still serves.
  CHECK(run(engine, prompt_for(1), 9, 4).get().info.reason == FinishReason::length);
}

namespace {
// A provider's sample op refuses a whole batch for one row it cannot take
// (as the CPU and CUDA providers do); it samples nothing itself.
class BatchRefusingSampler : public GatedEchoModel {
 public:
  using GatedEchoModel::GatedEchoModel;
  bool sample(std::span<const SampleInput> rows, std::vector<SampleResult>&) override {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!(rows[i].params->repetition_penalty > 0.0f) || !(rows[i].params->top_p > 0.0f))
        throw std::runtime_error("sample: rows[" + std::to_string(i) + "] is invalid");
      const auto& m = rows[i].allowed_mask;
      if (!m.empty() && std::all_of(m.begin(), m.end(), [](uint32_t w) { return w == 0; }))
        throw std::runtime_error("sample: rows[" + std::to_string(i) + "].allowed_mask allows no token");
    }
    return false;  // the host sampler draws
  }
};
}  // namespace

TEST_CASE("a row with sampling parameters the provider refuses fails alone, not its batch") {
  std::promise<void> open;
  Engine engine({{4, 64, 64}, 64}, plan_with(40),
                std::make_unique<BatchRefusingSampler>(160, 4, open.get_future().share()));
  std::future<Outcome> good_a, bad, good_b;
  REQUIRE(submit(engine, prompt_for(1), 1, 6, good_a) == SubmitStatus::accepted);
  auto promise = std::make_shared<std::promise<FinishInfo>>();
  GenerationRequest r;
  r.prompt = prompt_for(2);
  r.max_new_tokens = 6;
  r.sampling.repetition_penalty = 0.0f;  // what a double like 1e-300 becomes as a float
  r.on_finish = [promise](const FinishInfo& info) { promise->set_value(info); };
  REQUIRE(engine.submit(std::move(r), nullptr) == SubmitStatus::accepted);
  REQUIRE(submit(engine, prompt_for(3), 3, 6, good_b) == SubmitStatus::accepted);
  open.set_value();  // all three are in the first step's batch
  const FinishInfo info = promise->get_future().get();
  CHECK(info.reason == FinishReason::error);
  CHECK_THAT(info.error, Catch::Contains("invalid sampling parameters") && Catch::Contains("repetition_penalty"));
  for (auto* f : {&good_a, &good_b}) {
    const Outcome o = f->get();
    INFO(o.info.error);
    CHECK(o.info.reason == FinishReason::length);
    CHECK(o.tokens.size() == 6);
  }
}

TEST_CASE("a row whose output constraint allows no token fails alone, not its batch") {
  std::promise<void> open;
  Engine engine({{4, 64, 64}, 64}, plan_with(40),
                std::make_unique<BatchRefusingSampler>(160, 4, open.get_future().share()));
  std::future<Outcome> good_a, good_b;
  REQUIRE(submit(engine, prompt_for(1), 1, 6, good_a) == SubmitStatus::accepted);
  auto promise = std::make_shared<std::promise<FinishInfo>>();
  GenerationRequest r;
  r.prompt = prompt_for(2);
  r.max_new_tokens = 6;
  r.allowed_mask = [] { return std::vector<uint32_t>(4, 0u); };  // a parser that allows nothing (a bug)
  r.on_finish = [promise](const FinishInfo& info) { promise->set_value(info); };
  REQUIRE(engine.submit(std::move(r), nullptr) == SubmitStatus::accepted);
  REQUIRE(submit(engine, prompt_for(3), 3, 6, good_b) == SubmitStatus::accepted);
  open.set_value();  // all three are in the first step's batch
  const FinishInfo info = promise->get_future().get();
  CHECK(info.reason == FinishReason::error);
  CHECK_THAT(info.error, Catch::Contains("no token is allowed by the output constraint"));
  for (auto* f : {&good_a, &good_b}) {
    const Outcome o = f->get();
    INFO(o.info.error);
    CHECK(o.info.reason == FinishReason::length);
    CHECK(o.tokens.size() == 6);
  }
}

namespace {
// A model whose forward step fails until `healthy` is set (a device error
// that sticks, then clears).
class FailingModel : public PagedEchoModel {
 public:
  using PagedEchoModel::PagedEchoModel;
  std::atomic<bool> healthy{false};
  void forward(const StepBatch& b, std::vector<float>& logits) override {
    if (!healthy) throw std::runtime_error("device lost");
    PagedEchoModel::forward(b, logits);
  }
};
}  // namespace

TEST_CASE("the engine counts forward steps failing in a row, for /ready") {
  auto model = std::make_unique<FailingModel>(160, 4);
  FailingModel* failing = model.get();
  Engine engine({{4, 64, 64}, 64}, plan_with(40), std::move(model));
  for (int i = 0; i < 3; ++i) {
    const Outcome o = run(engine, prompt_for(i), 1, 4).get();
    CHECK(o.info.reason == FinishReason::error);
  }
  CHECK(engine.stats().failed_steps_in_a_row == 3);
  CHECK_THAT(engine.stats().last_step_error, Catch::Contains("device lost"));
  CHECK(engine.stats().step_running_s < 1.0);  // no step is stuck (one may be ending: its finish came first)
  failing->healthy = true;
  CHECK(run(engine, prompt_for(5), 1, 4).get().info.reason == FinishReason::length);
  CHECK(engine.stats().failed_steps_in_a_row == 0);
}

namespace {
// A provider whose sample op fails on every call (a sticky device error).
class SampleFailingModel : public PagedEchoModel {
 public:
  using PagedEchoModel::PagedEchoModel;
  bool sample(std::span<const SampleInput>, std::vector<SampleResult>&) override {
    throw std::runtime_error("sample: device lost");
  }
};
}  // namespace

TEST_CASE("steps whose sampling fails count as failed steps too") {
  Engine engine({{4, 64, 64}, 64}, plan_with(40), std::make_unique<SampleFailingModel>(160, 4));
  for (int i = 0; i < 3; ++i) CHECK(run(engine, prompt_for(i), 1, 4).get().info.reason == FinishReason::error);
  CHECK(engine.stats().failed_steps_in_a_row == 3);
  CHECK_THAT(engine.stats().last_step_error, Catch::Contains("sampling") && Catch::Contains("device lost"));
}

TEST_CASE("submit_all queues every request or none") {
  // One HTTP request's choices: a set the queue cannot hold is refused
  // whole, leaving nothing queued that would crowd out the next request.
  std::promise<void> gate;
  Engine engine({{1, 64, 3}, 64}, plan_with(40), std::make_unique<GatedEchoModel>(160, 4, gate.get_future().share()));
  std::atomic<int> finished{0};
  std::promise<void> three_finished;
  auto requests = [&](size_t n) {
    std::vector<GenerationRequest> rs(n);
    for (auto& r : rs) {
      r.prompt = {1, 2, 3};
      r.max_new_tokens = 2;
      r.on_finish = [&finished, &three_finished](const FinishInfo&) {
        if (++finished == 3) three_finished.set_value();
      };
    }
    return rs;
  };
  std::vector<int64_t> ids{42};
  CHECK(engine.submit_all(requests(4), &ids) == SubmitStatus::queue_full);
  CHECK(ids == std::vector<int64_t>{42});  // untouched
  CHECK(engine.stats().waiting == 0);
  REQUIRE(engine.submit_all(requests(3), &ids) == SubmitStatus::accepted);
  CHECK(ids.size() == 3);
  CHECK(ids[0] != ids[1]);
  gate.set_value();
  three_finished.get_future().wait();
  CHECK(finished == 3);
  engine.stop_accepting();
  CHECK(engine.submit_all(requests(1), &ids) == SubmitStatus::draining);
}

TEST_CASE("step time is split into the model's calls and the host work around them") {
  // A forward that takes at least 3 ms: that time is the model's, and the
  // steps' whole time holds it.
  class SlowForward : public PagedEchoModel {
   public:
    using PagedEchoModel::PagedEchoModel;
    void forward(const StepBatch& b, std::vector<float>& logits) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      PagedEchoModel::forward(b, logits);
    }
  };
  Engine engine({{4, 64, 64}, 64}, plan_with(40), std::make_unique<SlowForward>(160, 4));
  auto o = run(engine, prompt_for(2), 7, 6).get();
  CHECK(o.tokens.size() == 6);
  const EngineStats s = engine.stats();
  CHECK(s.steps >= 6);
  CHECK(s.model_seconds >= 0.003 * static_cast<double>(s.steps));
  CHECK(s.step_seconds >= s.model_seconds);
}
