// sample: greedy, logprobs from raw logits, top logprobs, non-finite rows,
// masks, penalties, filters, and the seeded draw's determinism and
// distribution.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <numeric>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(3);
  return c;
}

seatrt_sampling_row greedy_row() {
  seatrt_sampling_row r{};
  r.struct_size = sizeof r;
  r.temperature = 0.0f;
  r.top_p = 1.0f;
  r.repetition_penalty = 1.0f;
  return r;
}

struct Outputs {
  std::vector<int32_t> token, top_ids, non_finite;
  std::vector<float> logprob, top_logprobs;
};

Outputs run(Tensor& logits, std::vector<seatrt_sampling_row>& rows, int32_t num_top) {
  const size_t b = static_cast<size_t>(logits.desc().shape[0]);
  Outputs o;
  o.token.assign(b, -7);
  o.non_finite.assign(b, -7);
  o.logprob.assign(b, 0);
  o.top_ids.assign(b * static_cast<size_t>(num_top) + 1, -7);
  o.top_logprobs.assign(b * static_cast<size_t>(num_top) + 1, 0);
  seatrt_sample_args args{};
  args.struct_size = sizeof args;
  args.logits = logits.get();
  args.rows = rows.data();
  args.num_top = num_top;
  args.token = o.token.data();
  args.logprob = o.logprob.data();
  args.top_ids = o.top_ids.data();
  args.top_logprobs = o.top_logprobs.data();
  args.non_finite = o.non_finite.data();
  cpu::sample(ctx(), args);
  return o;
}

double log_softmax_at(const Tensor& logits, int64_t row, int64_t id) {
  const int64_t v = logits.desc().shape[1];
  double mx = -INFINITY;
  for (int64_t i = 0; i < v; ++i) mx = std::max(mx, logits.at(row * v + i));
  double sum = 0;
  for (int64_t i = 0; i < v; ++i) sum += std::exp(logits.at(row * v + i) - mx);
  return logits.at(row * v + id) - mx - std::log(sum);
}

}  // namespace

TEST_CASE("greedy: argmax with lowest id on ties; logprobs and top logprobs from raw logits") {
  std::mt19937 rng(61);
  Tensor logits = test::random_tensor(rng, SEATRT_DTYPE_F32, {3, 50}, -5, 5);
  logits.set(0 * 50 + 17, 9.0);
  logits.set(0 * 50 + 31, 9.0);  // tie: 17 wins
  logits.set(1 * 50 + 3, NAN);    // row 1 is not usable
  logits.set(2 * 50 + 49, 7.0);
  std::vector<seatrt_sampling_row> rows(3, greedy_row());
  const Outputs o = run(logits, rows, 5);
  CHECK(o.token[0] == 17);
  CHECK(o.non_finite[0] == 0);
  CHECK(o.token[1] == -1);
  CHECK(o.non_finite[1] == 1);
  CHECK(o.token[2] == 49);
  CHECK(o.non_finite[2] == 0);
  CHECK(o.logprob[0] == Approx(log_softmax_at(logits, 0, 17)).epsilon(1e-6));
  CHECK(o.logprob[2] == Approx(log_softmax_at(logits, 2, 49)).epsilon(1e-6));
  // Top 5 of row 0: the two tied 9.0 (17 before 31), then descending.
  std::vector<int32_t> order(50);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits.at(a) > logits.at(b); });
  for (int i = 0; i < 5; ++i) {
    CHECK(o.top_ids[static_cast<size_t>(i)] == order[static_cast<size_t>(i)]);
    CHECK(o.top_logprobs[static_cast<size_t>(i)] == Approx(log_softmax_at(logits, 0, order[static_cast<size_t>(i)])).epsilon(1e-6));
  }
  // Infinity is non-finite too.
  logits.set(1 * 50 + 3, INFINITY);
  CHECK(run(logits, rows, 0).non_finite[1] == 1);
}

TEST_CASE("allowed_mask restricts the choice; logprob stays the raw one") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 40});
  for (int64_t i = 0; i < 40; ++i) logits.set(i, static_cast<double>(i));  // 39 is the argmax
  std::vector<uint32_t> mask = {0u, 1u << (33 - 32)};                        // only token 33
  std::vector<seatrt_sampling_row> rows(1, greedy_row());
  rows[0].allowed_mask = mask.data();
  rows[0].allowed_mask_words = 2;
  Outputs o = run(logits, rows, 0);
  CHECK(o.token[0] == 33);
  CHECK(o.logprob[0] == Approx(log_softmax_at(logits, 0, 33)).epsilon(1e-6));
  rows[0].temperature = 1.5f;  // sampling obeys the mask as well
  rows[0].seed = 5;
  for (uint64_t step = 0; step < 20; ++step) {
    rows[0].step = step;
    CHECK(run(logits, rows, 0).token[0] == 33);
  }
  mask[1] = 0;
  CHECK(test::error_of([&] { run(logits, rows, 0); }) == SEATRT_ERR_INVALID_ARG);
  rows[0].allowed_mask_words = 1;
  CHECK(test::error_of([&] { run(logits, rows, 0); }) == SEATRT_ERR_INVALID_ARG);
}

TEST_CASE("penalties: repetition over prompt+output, frequency and presence over output") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 4});
  const double raw[4] = {2.0, 1.9, -0.5, 1.0};
  for (int64_t i = 0; i < 4; ++i) logits.set(i, raw[i]);
  std::vector<seatrt_sampling_row> rows(1, greedy_row());
  const int32_t prompt[] = {0};
  const int32_t output[] = {1, 1};
  // Repetition 1.2 on token 0 (positive: divided) -> 1.667 < 1.9.
  rows[0].repetition_penalty = 1.2f;
  rows[0].prompt_tokens = prompt;
  rows[0].num_prompt_tokens = 1;
  CHECK(run(logits, rows, 0).token[0] == 1);
  // Frequency 0.2 on token 1 seen twice: 1.9 - 0.4 = 1.5 < 1.667.
  rows[0].output_tokens = output;
  rows[0].num_output_tokens = 2;
  rows[0].frequency_penalty = 0.2f;
  CHECK(run(logits, rows, 0).token[0] == 0);
  // Presence 1.0 instead: 1.9 - 1 = 0.9; token 0 at 1.667 still wins; make
  // the prompt penalty larger so token 3 (1.0) wins: 2/2.5 = 0.8.
  rows[0].frequency_penalty = 0.0f;
  rows[0].presence_penalty = 1.0f;
  rows[0].repetition_penalty = 2.5f;
  // token 1 is in the output, so repetition applies to it as well: 1.9/2.5 - 1 < 0.
  CHECK(run(logits, rows, 0).token[0] == 3);
  // A negative logit is multiplied by the repetition penalty: -1 * 2 = -2 < -1.5.
  Tensor negative(SEATRT_DTYPE_F32, {1, 2});
  negative.set(0, -1.0);
  negative.set(1, -1.5);
  std::vector<seatrt_sampling_row> neg_rows(1, greedy_row());
  neg_rows[0].repetition_penalty = 2.0f;
  neg_rows[0].prompt_tokens = prompt;
  neg_rows[0].num_prompt_tokens = 1;
  CHECK(run(negative, neg_rows, 0).token[0] == 1);
  const int32_t bad[] = {4};
  rows[0].output_tokens = bad;
  rows[0].num_output_tokens = 1;
  std::string msg;
  CHECK(test::error_of([&] { run(logits, rows, 0); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("output_tokens[0] = 4"));
}

TEST_CASE("seeded draws: determined by (seed, step), distributed like softmax(logits / T)") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 4});
  const double raw[4] = {0.0, 1.0, 2.0, -1.0};
  for (int64_t i = 0; i < 4; ++i) logits.set(i, raw[i]);
  std::vector<seatrt_sampling_row> rows(1, greedy_row());
  rows[0].temperature = 2.0f;
  rows[0].seed = 1234;
  std::map<int32_t, int> counts;
  const int draws = 4000;
  for (int s = 0; s < draws; ++s) {
    rows[0].step = static_cast<uint64_t>(s);
    const int32_t a = run(logits, rows, 0).token[0];
    REQUIRE(a == run(logits, rows, 0).token[0]);  // replays identically
    ++counts[a];
  }
  double z = 0;
  for (double v : raw) z += std::exp(v / 2.0);
  for (int32_t id = 0; id < 4; ++id) {
    const double p = std::exp(raw[id] / 2.0) / z;
    const double sd = std::sqrt(draws * p * (1 - p));
    CHECK(std::fabs(counts[id] - draws * p) < 5 * sd);
  }
  // Another seed gives another sequence.
  int differ = 0;
  for (int s = 0; s < 50; ++s) {
    rows[0].step = static_cast<uint64_t>(s);
    rows[0].seed = 1234;
    const int32_t a = run(logits, rows, 0).token[0];
    rows[0].seed = 999;
    differ += a != run(logits, rows, 0).token[0];
  }
  CHECK(differ > 5);
}

TEST_CASE("top_k, top_p and min_p keep only the intended candidates") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 5});
  // probabilities at T=1: about 0.46, 0.28, 0.17, 0.06, 0.02
  const double raw[5] = {2.0, 1.5, 1.0, 0.0, -1.0};
  for (int64_t i = 0; i < 5; ++i) logits.set(i, raw[i]);
  const auto seen_with = [&](auto configure) {
    std::vector<seatrt_sampling_row> rows(1, greedy_row());
    rows[0].temperature = 1.0f;
    configure(rows[0]);
    std::set<int32_t> seen;
    for (uint64_t s = 0; s < 600; ++s) {
      rows[0].step = s;
      seen.insert(run(logits, rows, 0).token[0]);
    }
    return seen;
  };
  CHECK(seen_with([](seatrt_sampling_row& r) { r.top_k = 2; }) == std::set<int32_t>{0, 1});
  CHECK(seen_with([](seatrt_sampling_row& r) { r.top_k = 1; }) == std::set<int32_t>{0});
  // top_p 0.6: 0.46 < 0.6, 0.46 + 0.28 >= 0.6 -> {0, 1}.
  CHECK(seen_with([](seatrt_sampling_row& r) { r.top_p = 0.6f; }) == std::set<int32_t>{0, 1});
  // min_p 0.3: keep p >= 0.3 * p_max: ratios 1, 0.61, 0.37, 0.14, 0.05 -> {0, 1, 2}.
  CHECK(seen_with([](seatrt_sampling_row& r) { r.min_p = 0.3f; }) == std::set<int32_t>{0, 1, 2});
  CHECK(seen_with([](seatrt_sampling_row&) {}) == std::set<int32_t>{0, 1, 2, 3, 4});
}

TEST_CASE("sample refuses bad rows and outputs") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 8});
  std::vector<seatrt_sampling_row> rows(1, greedy_row());
  rows[0].top_p = 0.0f;
  CHECK(test::error_of([&] { run(logits, rows, 0); }) == SEATRT_ERR_INVALID_ARG);
  rows[0] = greedy_row();
  rows[0].temperature = -1.0f;
  CHECK(test::error_of([&] { run(logits, rows, 0); }) == SEATRT_ERR_INVALID_ARG);
  rows[0] = greedy_row();
  CHECK(test::error_of([&] { run(logits, rows, 21); }) == SEATRT_ERR_INVALID_ARG);
  rows[0].struct_size = 8;
  CHECK(test::error_of([&] { run(logits, rows, 0); }) == SEATRT_ERR_INVALID_ARG);
  seatrt_sample_args args{};
  args.struct_size = sizeof args;
  args.logits = logits.get();
  args.rows = rows.data();
  CHECK(test::error_of([&] { cpu::sample(ctx(), args); }) == SEATRT_ERR_INVALID_ARG);  // token NULL
}

TEST_CASE("logit bias: added to the raw logit before the penalties; logprobs stay raw") {
  Tensor logits(SEATRT_DTYPE_F32, {2, 6});
  const double raw[6] = {3.0, 0.75, -1.0, 2.5, 0.0, 1.0};
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t i = 0; i < 6; ++i) logits.set(r * 6 + i, raw[i]);
  std::vector<seatrt_sampling_row> rows(2, greedy_row());
  // Row 0: +4 lifts token 2 from -1 to 3.0 + ... = 3.0: a tie with token 0,
  // which the lower id wins; +4.5 makes token 2 the argmax (3.5).
  const int32_t ids0[] = {2};
  float lift = 4.0f;
  rows[0].bias_ids = ids0;
  rows[0].bias_values = &lift;
  rows[0].num_bias = 1;
  // Row 1: -100 on the argmax (0) and +0.25 on token 5: 2.5 (token 3) wins.
  const int32_t ids1[] = {0, 5};
  const float values1[] = {-100.0f, 0.25f};
  rows[1].bias_ids = ids1;
  rows[1].bias_values = values1;
  rows[1].num_bias = 2;
  Outputs o = run(logits, rows, 2);
  CHECK(o.token[0] == 0);
  CHECK(o.token[1] == 3);
  lift = 4.5f;
  o = run(logits, rows, 2);
  CHECK(o.token[0] == 2);
  // The reported logprobs are those of the raw logits, bias or not.
  CHECK(o.logprob[0] == Approx(log_softmax_at(logits, 0, 2)).epsilon(1e-6));
  CHECK(o.top_ids[0] == 0);
  CHECK(o.top_ids[1] == 3);
  CHECK(o.logprob[1] == Approx(log_softmax_at(logits, 1, 3)).epsilon(1e-6));
  // Seeded sampling obeys a -100 ban: token 0 never comes out of row 1.
  rows[1].temperature = 1.0f;
  rows[1].seed = 11;
  for (uint64_t step = 0; step < 50; ++step) {
    rows[1].step = step;
    CHECK(run(logits, rows, 0).token[1] != 0);
  }
}

TEST_CASE("logit bias comes before the repetition penalty, as in vLLM") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 2});
  logits.set(0, 3.0);
  logits.set(1, 0.75);
  std::vector<seatrt_sampling_row> rows(1, greedy_row());
  const int32_t prompt[] = {0};
  const int32_t ids[] = {0};
  const float values[] = {-1.0f};
  rows[0].prompt_tokens = prompt;
  rows[0].num_prompt_tokens = 1;
  rows[0].repetition_penalty = 2.0f;
  rows[0].bias_ids = ids;
  rows[0].bias_values = values;
  rows[0].num_bias = 1;
  // Bias first: (3 - 1) / 2 = 1.0 > 0.75.  Penalty first: 3 / 2 - 1 = 0.5 < 0.75.
  CHECK(run(logits, rows, 0).token[0] == 0);
}

TEST_CASE("logit bias: a 1.6 caller's row has none; bad bias lists are refused") {
  Tensor logits(SEATRT_DTYPE_F32, {1, 8});
  for (int64_t i = 0; i < 8; ++i) logits.set(i, static_cast<double>(i));  // 7 is the argmax
  std::vector<seatrt_sampling_row> rows(1, greedy_row());
  int32_t ids[] = {1, 3};
  float values[] = {100.0f, 0.0f};
  rows[0].bias_ids = ids;
  rows[0].bias_values = values;
  rows[0].num_bias = 2;
  CHECK(run(logits, rows, 0).token[0] == 1);
  // struct_size as a 1.6 host compiled it: the fields beyond are not read.
  rows[0].struct_size = offsetof(seatrt_sampling_row, bias_ids);
  CHECK(run(logits, rows, 0).token[0] == 7);
  rows[0].struct_size = sizeof(seatrt_sampling_row);
  std::string msg;
  ids[1] = 1;  // repeated
  CHECK(test::error_of([&] { run(logits, rows, 0); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("bias_ids[1]"));
  ids[1] = 8;  // outside the vocabulary
  CHECK(test::error_of([&] { run(logits, rows, 0); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("outside the vocabulary"));
  ids[1] = 3;
  values[1] = NAN;
  CHECK(test::error_of([&] { run(logits, rows, 0); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("bias_values[1]"));
  values[1] = 0.0f;
  rows[0].bias_values = nullptr;
  CHECK(test::error_of([&] { run(logits, rows, 0); }) == SEATRT_ERR_INVALID_ARG);
}
