// min_tokens and allowed_token_ids (vLLM's extensions) narrow what a row may
// draw: before min_tokens the stop tokens are out, allowed_token_ids keeps
// only its ids, and both narrow a parser's mask rather than replace it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <future>
#include <memory>
#include <vector>

#include "engine/engine.hpp"
#include "engine_test_support.hpp"

using namespace seatrt::engine;
using test::Outcome;

namespace {

constexpr int32_t kVocab = 40;

// Token t's logit is 40 - t at every position: greedy prefers the lowest
// id still allowed, so what is drawn shows what the mask let through.
class Ladder : public ModelRunner {
 public:
  int32_t vocab_size() const override { return kVocab; }
  void forward(const StepBatch& b, std::vector<float>& logits) override {
    logits.clear();
    for (size_t r = 0; r < b.logits_index.size(); ++r)
      for (int32_t t = 0; t < kVocab; ++t) logits.push_back(static_cast<float>(kVocab - t));
  }
};

KvPlan plan() { return test::full_plan(64, 4, 64); }

Outcome run(Engine& engine, GenerationRequest r) {
  r.prompt = {3, 4, 5};
  r.sampling.temperature = 0.0f;
  SubmitStatus status{};
  auto f = test::submit_collecting(engine, std::move(r), &status);
  REQUIRE(status == SubmitStatus::accepted);
  return f.get();
}

std::vector<uint32_t> mask_of(std::initializer_list<int32_t> ids) {
  std::vector<uint32_t> m((kVocab + 31) / 32, 0u);
  for (int32_t id : ids) m[static_cast<size_t>(id) / 32] |= 1u << (id % 32);
  return m;
}

}  // namespace

TEST_CASE("min_tokens keeps the stop tokens out until that many tokens are drawn") {
  Engine engine({{4, 64, 64}, 64}, plan(), std::make_unique<Ladder>());
  GenerationRequest r;
  r.max_new_tokens = 10;
  r.stop_token_ids = {0, 1};
  Outcome plain = run(engine, r);
  CHECK(plain.info.reason == FinishReason::stop);
  CHECK(plain.tokens.empty());  // token 0 at once
  r.min_tokens = 3;
  Outcome o = run(engine, r);
  CHECK(o.tokens == std::vector<int32_t>{2, 2, 2});  // 0 and 1 are out for three draws
  CHECK(o.info.reason == FinishReason::stop);
  CHECK(o.info.stop_event.token == 0);  // then the stop token wins again
}

TEST_CASE("allowed_token_ids keep only their ids, inside a parser's mask") {
  Engine engine({{4, 64, 64}, 64}, plan(), std::make_unique<Ladder>());
  GenerationRequest r;
  r.max_new_tokens = 4;
  r.stop_token_ids = {0};
  r.allowed_token_ids = {9, 7, 30};
  Outcome o = run(engine, r);
  CHECK(o.tokens == std::vector<int32_t>{7, 7, 7, 7});
  CHECK(o.info.reason == FinishReason::length);
  // A parser allowing 9 and 0 beside them: only 9 is left.
  r.allowed_mask = [] { return mask_of({0, 9, 11}); };
  o = run(engine, r);
  CHECK(o.tokens == std::vector<int32_t>{9, 9, 9, 9});
  // Nothing in common: the request fails alone, naming the constraint.
  r.allowed_mask = [] { return mask_of({0, 11}); };
  r.allowed_token_ids = {5};
  o = run(engine, r);
  CHECK(o.info.reason == FinishReason::error);
  CHECK_THAT(o.info.error, Catch::Contains("no token is allowed"));
}
