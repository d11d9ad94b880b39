// Prompt logprobs (the legacy API's echo): every prompt token after the
// first is scored from the raw logits of the position before it, under
// chunking and the step's logits-row limit, beside other sequences; the
// expected values are computed here straight from the fake model's logits
// function over each prompt prefix, not through the engine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <future>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "engine/engine.hpp"
#include "engine_test_support.hpp"

using namespace seatrt::engine;

namespace {

constexpr int32_t kVocab = 29;
constexpr int32_t kBlock = 4;

// The logits after a context: a hash of every token in it.
std::vector<float> logits_after(const std::vector<int32_t>& context) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t t : context) h = (h ^ static_cast<uint64_t>(t + 1)) * 1099511628211ull;
  std::vector<float> row(kVocab);
  for (int32_t v = 0; v < kVocab; ++v) {
    const uint64_t x = (h ^ static_cast<uint64_t>(v)) * 0x9e3779b97f4a7c15ull;
    row[static_cast<size_t>(v)] = static_cast<float>((x >> 40) % 1000) / 125.0f - 4.0f;
  }
  return row;
}

// Reads each row's context back from its paged cache up to the row's own
// position, and refuses a step with more logits rows than `max_rows` (the
// runner's buffer).
class PrefixModel : public ModelRunner {
 public:
  PrefixModel(int64_t slots, int64_t max_rows) : cache_(static_cast<size_t>(slots), -1), max_rows_(max_rows) {}
  int32_t vocab_size() const override { return kVocab; }
  void forward(const StepBatch& b, std::vector<float>& logits) override {
    if (static_cast<int64_t>(b.logits_index.size()) > max_rows_)
      throw std::runtime_error("more logits rows than the runner holds");
    most_rows = std::max(most_rows, static_cast<int64_t>(b.logits_index.size()));
    for (int32_t t = 0; t < b.num_tokens(); ++t)
      cache_.at(static_cast<size_t>(b.slot_mapping[static_cast<size_t>(t)])) = b.token_ids[static_cast<size_t>(t)];
    logits.clear();
    for (int32_t row : b.logits_index) {
      size_t s = 0;
      while (b.query_start[s + 1] <= row) ++s;
      const int32_t pos = b.seq_lens[s] - (b.query_start[s + 1] - 1 - row);  // tokens up to the row's own
      std::vector<int32_t> context;
      for (int32_t p = 0; p < pos; ++p) {
        const int32_t block = b.block_tables[s * static_cast<size_t>(b.max_blocks) + static_cast<size_t>(p / kBlock)];
        context.push_back(cache_.at(static_cast<size_t>(block * kBlock + p % kBlock)));
      }
      const auto l = logits_after(context);
      logits.insert(logits.end(), l.begin(), l.end());
    }
  }
  int64_t most_rows = 0;

 private:
  std::vector<int32_t> cache_;
  int64_t max_rows_;
};

KvPlan plan_with(int64_t blocks) { return test::full_plan(blocks, kBlock, 96); }

struct Outcome {
  std::vector<TokenEvent> prompt_events;
  int prompt_calls = 0;
  bool prompt_before_tokens = true;
  std::vector<int32_t> tokens;
  FinishInfo info;
};

std::future<Outcome> run(Engine& engine, std::vector<int32_t> prompt, int64_t max_new, int32_t prompt_logprobs,
                         uint64_t seed = 7) {
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto out = std::make_shared<Outcome>();
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_new_tokens = max_new;
  r.sampling.temperature = 0.9f;
  r.sampling.seed = seed;
  r.prompt_logprobs = prompt_logprobs;
  r.on_prompt_logprobs = [out](std::vector<TokenEvent> events) {
    out->prompt_events = std::move(events);
    ++out->prompt_calls;
  };
  r.on_token = [out](const TokenEvent& e) {
    if (out->prompt_calls == 0) out->prompt_before_tokens = false;
    out->tokens.push_back(e.token);
    return true;
  };
  r.on_finish = [out, promise](const FinishInfo& info) {
    out->info = info;
    promise->set_value(*out);
  };
  auto f = promise->get_future();
  REQUIRE(engine.submit(std::move(r), nullptr) == SubmitStatus::accepted);
  return f;
}

std::vector<int32_t> prompt_of(int n, int salt) {
  std::vector<int32_t> p;
  for (int k = 0; k < n; ++k) p.push_back((salt * 11 + k * 5 + k * k) % kVocab);
  return p;
}

// Event i must score prompt[i + 1] from the logits after prompt[0..i]:
// its raw log-softmax, and the top `k` ids by logit (lowest id on ties).
void check_events(const std::vector<int32_t>& prompt, const std::vector<TokenEvent>& events, int32_t k) {
  REQUIRE(events.size() == prompt.size() - 1);
  for (size_t i = 0; i + 1 < prompt.size(); ++i) {
    const auto l = logits_after(std::vector<int32_t>(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(i + 1)));
    const double mx = *std::max_element(l.begin(), l.end());
    double sum = 0;
    for (float v : l) sum += std::exp(double(v) - mx);
    const double lse = mx + std::log(sum);
    const int32_t target = prompt[i + 1];
    INFO("prompt token " << i + 1);
    CHECK(events[i].token == target);
    CHECK(events[i].logprob == Approx(l[static_cast<size_t>(target)] - lse).margin(1e-5));
    std::vector<int32_t> ids(kVocab);
    std::iota(ids.begin(), ids.end(), 0);
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return l[size_t(a)] > l[size_t(b)]; });
    ids.resize(static_cast<size_t>(k));
    CHECK(events[i].top_ids == ids);
    REQUIRE(events[i].top_logprobs.size() == static_cast<size_t>(k));
    for (int32_t j = 0; j < k; ++j)
      CHECK(events[i].top_logprobs[size_t(j)] == Approx(l[size_t(ids[size_t(j)])] - lse).margin(1e-5));
  }
}

}  // namespace

TEST_CASE("prompt logprobs score every prompt token from the position before, then generation goes on unchanged") {
  const auto prompt = prompt_of(23, 1);
  std::vector<int32_t> plain;
  {
    Engine engine({{4, 64, 64}, 96}, plan_with(40), std::make_unique<PrefixModel>(160, 4));
    plain = run(engine, prompt, 6, -1).get().tokens;
  }
  // 4 logits rows a step: the 23-token prompt is computed in chunks of at
  // most 4 tokens, each position's row read.
  auto model = std::make_unique<PrefixModel>(160, 4);
  PrefixModel* m = model.get();
  Engine engine({{4, 64, 64}, 96}, plan_with(40), std::move(model));
  const Outcome o = run(engine, prompt, 6, 3).get();
  CHECK(o.info.reason == FinishReason::length);
  CHECK(o.prompt_calls == 1);
  CHECK(o.prompt_before_tokens);
  check_events(prompt, o.prompt_events, 3);
  CHECK(o.tokens == plain);
  CHECK(m->most_rows == 4);
}

TEST_CASE("prompt logprobs beside decoding sequences keep the step within its logits rows") {
  auto model = std::make_unique<PrefixModel>(400, 6);
  PrefixModel* m = model.get();
  Engine engine({{6, 48, 64}, 96}, plan_with(100), std::move(model));
  std::vector<std::future<Outcome>> others;
  for (int i = 0; i < 4; ++i) others.push_back(run(engine, prompt_of(5 + i, 10 + i), 30, -1, 100u + unsigned(i)));
  const auto a = prompt_of(31, 2), b = prompt_of(17, 3);
  auto fa = run(engine, a, 3, 5);
  auto fb = run(engine, b, 3, 0);
  const Outcome oa = fa.get(), ob = fb.get();
  check_events(a, oa.prompt_events, 5);
  check_events(b, ob.prompt_events, 0);
  for (auto& f : others) CHECK(f.get().info.reason == FinishReason::length);
  CHECK(m->most_rows <= 6);
  CHECK(engine.stats().blocks_used == 0);
}

TEST_CASE("prompt logprobs ignore the prefix cache; max_new_tokens 0 returns the prompt alone") {
  Engine engine({{4, 64, 64}, 96}, plan_with(40), std::make_unique<PrefixModel>(160, 4));
  const auto prompt = prompt_of(18, 4);
  CHECK(run(engine, prompt, 2, -1).get().info.reason == FinishReason::length);  // its blocks are now cached
  const Outcome cached = run(engine, prompt, 2, -1).get();
  CHECK(cached.info.cached_prompt_tokens > 0);
  const Outcome o = run(engine, prompt, 0, 2).get();
  CHECK(o.info.reason == FinishReason::length);
  CHECK(o.info.cached_prompt_tokens == 0);
  CHECK(o.info.generated_tokens == 0);
  CHECK(o.tokens.empty());
  CHECK(o.prompt_calls == 1);
  check_events(prompt, o.prompt_events, 2);
  // A one-token prompt has nothing to score: one call, no events.
  const Outcome one = run(engine, {5}, 1, 2).get();
  CHECK(one.prompt_calls == 1);
  CHECK(one.prompt_events.empty());
  CHECK(one.tokens.size() == 1);
}
