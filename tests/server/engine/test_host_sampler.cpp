// Host sampler: raw-logit logprobs, greedy, top-k/top-p/min-p, penalties,
// the allowed mask, seeded determinism and non-finite detection.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "engine/host_sampler.hpp"

using namespace seatrt::engine;

namespace {
SampleResult draw(const std::vector<float>& logits, const SamplingParams& p, uint64_t step = 0,
                  std::vector<uint32_t> mask = {}, std::vector<int32_t> out = {}) {
  SampleInput in;
  in.logits = logits;
  in.params = &p;
  in.step = step;
  in.output_tokens = out;
  in.allowed_mask = mask;
  return sample_on_host(in);
}
double log_softmax(const std::vector<float>& l, size_t i) {
  double z = 0;
  for (float v : l) z += std::exp(double(v));
  return double(l[i]) - std::log(z);
}
}  // namespace

TEST_CASE("greedy picks the argmax and reports raw logprobs") {
  const std::vector<float> logits{0.5f, 2.0f, -1.0f, 2.0f};
  SamplingParams p;
  p.temperature = 0;
  p.num_top_logprobs = 2;
  const auto r = draw(logits, p);
  CHECK(r.event.token == 1);  // lowest id on ties
  CHECK(r.event.logprob == Approx(log_softmax(logits, 1)));
  REQUIRE(r.event.top_ids.size() == 2);
  CHECK(r.event.top_ids[0] == 1);
  CHECK(r.event.top_ids[1] == 3);
}

TEST_CASE("seeded draws repeat; different seeds or steps differ") {
  std::vector<float> logits(50, 0.0f);
  SamplingParams p;
  p.seed = 42;
  std::vector<int32_t> a, b, c;
  for (uint64_t s = 0; s < 20; ++s) {
    a.push_back(draw(logits, p, s).event.token);
    b.push_back(draw(logits, p, s).event.token);
  }
  p.seed = 43;
  for (uint64_t s = 0; s < 20; ++s) c.push_back(draw(logits, p, s).event.token);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(std::set<int32_t>(a.begin(), a.end()).size() > 5);
}

TEST_CASE("top-k 1, tiny top-p and high min-p reduce to the best token") {
  const std::vector<float> logits{1.0f, 3.0f, 2.9f, 0.0f};
  for (int variant = 0; variant < 3; ++variant) {
    SamplingParams p;
    p.temperature = 1.0f;
    if (variant == 0) p.top_k = 1;
    if (variant == 1) p.top_p = 0.01f;
    if (variant == 2) p.min_p = 0.99f;
    for (uint64_t s = 0; s < 10; ++s) CHECK(draw(logits, p, s).event.token == 1);
  }
}

TEST_CASE("the allowed mask and penalties shape the draw, not the logprobs") {
  const std::vector<float> logits{5.0f, 1.0f, 0.0f, 0.0f};
  SamplingParams p;
  p.temperature = 0;
  const auto masked = draw(logits, p, 0, {0b1100u});
  CHECK(masked.event.token == 2);
  CHECK(masked.event.logprob == Approx(log_softmax(logits, 2)));
  p.presence_penalty = 2.0f;
  p.frequency_penalty = 1.0f;  // token 0 seen twice: 5 - 2 - 2 = 1 -> ties with 1, lower id wins
  CHECK(draw(logits, p, 0, {}, {0, 0}).event.token == 0);
  p.frequency_penalty = 1.5f;
  CHECK(draw(logits, p, 0, {}, {0, 0}).event.token == 1);
}

TEST_CASE("NaN or infinity in the logits is reported, no token drawn") {
  SamplingParams p;
  CHECK(draw({0.0f, std::numeric_limits<float>::quiet_NaN()}, p).non_finite);
  CHECK(draw({0.0f, std::numeric_limits<float>::infinity()}, p).non_finite);
  CHECK_FALSE(draw({0.0f, 1.0f}, p).non_finite);
}

TEST_CASE("logit bias shifts the draw before the penalties, not the logprobs; bad lists are named") {
  const std::vector<float> logits{3.0f, 0.75f, -1.0f};
  SamplingParams p;
  p.temperature = 0;
  p.bias_ids = {2};
  p.bias_values = {4.5f};  // -1 + 4.5 = 3.5 beats 3.0
  auto r = draw(logits, p);
  CHECK(r.event.token == 2);
  CHECK(r.event.logprob == Approx(log_softmax(logits, 2)));
  // Bias before the repetition penalty: (3 - 1) / 2 = 1.0 > 0.75, where the
  // other order would give 3 / 2 - 1 = 0.5.
  p.bias_ids = {0};
  p.bias_values = {-1.0f};
  p.repetition_penalty = 2.0f;
  CHECK(draw(logits, p, 0, {}, {0}).event.token == 0);
  p.repetition_penalty = 1.0f;
  p.bias_values = {-100.0f};  // a ban holds under sampling too
  p.temperature = 1.0f;
  p.seed = 3;
  for (uint64_t step = 0; step < 40; ++step) CHECK(draw(logits, p, step).event.token != 0);

  CHECK(sampling_params_problem(p, 3).empty());
  p.bias_ids = {3};
  CHECK_THAT(sampling_params_problem(p, 3), Catch::Contains("outside the vocabulary [0, 3)"));
  p.bias_ids = {1, 1};
  p.bias_values = {1.0f, 2.0f};
  CHECK_THAT(sampling_params_problem(p, 3), Catch::Contains("out of order or repeated"));
  p.bias_ids = {1};
  CHECK_THAT(sampling_params_problem(p, 3), Catch::Contains("1 ids but 2 values"));
  p.bias_values = {std::numeric_limits<float>::infinity()};
  CHECK_THAT(sampling_params_problem(p, 3), Catch::Contains("not finite"));
}
