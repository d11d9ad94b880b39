// sample over a Gemma-4 vocabulary (262144): greedy rows (plain, with
// penalties and an allowed-token mask, with a planted tie), a seeded
// temperature/top-k/top-p/min-p row, and a row holding a NaN; then rows
// with a logit bias alone, with penalties and a mask, and drawn.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "cases.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

constexpr int64_t kVocab = 262144;
constexpr int32_t kTop = 20;

// Neutral rows (greedy, no filter), to be specialised by each case.
std::vector<seatrt_sampling_row> neutral_rows(int64_t n) {
  std::vector<seatrt_sampling_row> rows(static_cast<size_t>(n));
  for (auto& r : rows) {
    r = {};
    r.struct_size = sizeof r;
    r.top_p = 1.0f;
    r.repetition_penalty = 1.0f;
  }
  return rows;
}

// Repetition, presence and frequency penalties over `prompt`/`output`, and `mask`.
void penalise(seatrt_sampling_row& r, const std::vector<int32_t>& prompt, const std::vector<int32_t>& output,
              const std::vector<uint32_t>& mask) {
  r.repetition_penalty = 1.3f;
  r.presence_penalty = 0.5f;
  r.frequency_penalty = 0.2f;
  r.prompt_tokens = prompt.data();
  r.num_prompt_tokens = static_cast<int64_t>(prompt.size());
  r.output_tokens = output.data();
  r.num_output_tokens = static_cast<int64_t>(output.size());
  r.allowed_mask = mask.data();
  r.allowed_mask_words = static_cast<int64_t>(mask.size());
}

// What one provider's sample op returned for every row.
struct Sampled {
  std::vector<int32_t> token, top_ids, non_finite;
  std::vector<float> logprob, top_lp;
};

Sampled sample_rows(Provider& p, const Tensor& logits, const std::vector<seatrt_sampling_row>& rows) {
  const size_t n = rows.size();
  Sampled s{std::vector<int32_t>(n, -7), std::vector<int32_t>(n * kTop, -7), std::vector<int32_t>(n, -7),
            std::vector<float>(n, 0.0f), std::vector<float>(n * kTop, 0.0f)};
  DeviceTensor dl(p, logits);
  seatrt_sample_args args{};
  args.struct_size = sizeof args;
  args.logits = dl.get();
  args.rows = rows.data();
  args.num_top = kTop;
  args.token = s.token.data();
  args.logprob = s.logprob.data();
  args.top_ids = s.top_ids.data();
  args.top_logprobs = s.top_lp.data();
  args.non_finite = s.non_finite.data();
  run_op<SEATRT_OP_SAMPLE>(p, args);
  return s;
}

// Row b's top ids (exact) and top logprobs (approximate) into `o`.
void add_top(Outputs& o, const Sampled& s, int64_t b) {
  for (int32_t i = 0; i < kTop; ++i) {
    o.exact.push_back(s.top_ids[static_cast<size_t>(b * kTop + i)]);
    o.approx.push_back(s.top_lp[static_cast<size_t>(b * kTop + i)]);
  }
}

}  // namespace

void add_sample_cases(std::vector<Case>& cases) {
  cases.push_back({SEATRT_OP_SAMPLE, "F32 [5, 262144]: greedy, penalties+mask, tie, seeded top-k/p, NaN row", kBoundF32,
                   [](Provider& p, std::mt19937& rng) {
                     const int64_t rows_n = 5;
                     Tensor logits = random_input(rng, SEATRT_DTYPE_F32, {rows_n, kVocab}, 8.0);
                     // Row 4: a planted tie for the maximum.
                     logits.set(4 * kVocab + 1000, 20.0);
                     logits.set(4 * kVocab + 77, 20.0);
                     logits.set(3 * kVocab + 5, NAN);
                     std::vector<int32_t> prompt, output;
                     for (int i = 0; i < 50; ++i) prompt.push_back(static_cast<int32_t>(rng() % kVocab));
                     for (int i = 0; i < 30; ++i) output.push_back(static_cast<int32_t>(rng() % kVocab));
                     std::vector<uint32_t> mask(static_cast<size_t>(kVocab / 32));
                     for (uint32_t& word : mask) word = static_cast<uint32_t>(rng());
                     std::vector<seatrt_sampling_row> rows = neutral_rows(rows_n);
                     penalise(rows[1], prompt, output, mask);
                     rows[2].temperature = 0.8f;
                     rows[2].top_k = 40;
                     rows[2].top_p = 0.95f;
                     rows[2].min_p = 0.05f;
                     rows[2].seed = rng();
                     rows[2].step = rng() % 1000;
                     const Sampled s = sample_rows(p, logits, rows);

                     Outputs o;
                     for (int64_t b = 0; b < rows_n; ++b) {
                       o.exact.push_back(s.non_finite[static_cast<size_t>(b)]);
                       if (b == 3) {  // the NaN row: token -1, nothing else is meaningful
                         o.exact.push_back(s.token[static_cast<size_t>(b)]);
                         continue;
                       }
                       std::vector<double> row(static_cast<size_t>(kVocab));
                       for (int64_t i = 0; i < kVocab; ++i) row[static_cast<size_t>(i)] = logits.at(b * kVocab + i);
                       const double mx = *std::max_element(row.begin(), row.end());
                       double sum = 0;
                       for (double v : row) sum += std::exp(v - mx);
                       const double lse = mx + std::log(sum);
                       const int32_t t = s.token[static_cast<size_t>(b)];
                       if (b == 2) {
                         // The draw itself may differ between providers; it must come from
                         // the 40 largest logits and carry its own raw logprob.
                         std::vector<int32_t> ids(static_cast<size_t>(kVocab));
                         std::iota(ids.begin(), ids.end(), 0);
                         std::partial_sort(ids.begin(), ids.begin() + 40, ids.end(), [&](int32_t x, int32_t y) {
                           return row[size_t(x)] > row[size_t(y)] || (row[size_t(x)] == row[size_t(y)] && x < y);
                         });
                         const bool in_top = t >= 0 && std::find(ids.begin(), ids.begin() + 40, t) != ids.begin() + 40;
                         const bool lp_ok =
                             in_top && std::fabs(s.logprob[static_cast<size_t>(b)] - (row[size_t(t)] - lse)) < 1e-3;
                         o.exact.push_back(in_top && lp_ok ? 1 : 0);
                       } else {
                         o.exact.push_back(t);
                         o.approx.push_back(s.logprob[static_cast<size_t>(b)]);
                       }
                       add_top(o, s, b);
                     }
                     return o;
                   }});
  cases.push_back({SEATRT_OP_SAMPLE, "F32 [3, 262144] logit bias: greedy, bias+penalties+mask, top-k 1 draw",
                   kBoundF32, [](Provider& p, std::mt19937& rng) {
                     const int64_t rows_n = 3;
                     Tensor logits = random_input(rng, SEATRT_DTYPE_F32, {rows_n, kVocab}, 8.0);
                     std::vector<int32_t> prompt, output;
                     for (int i = 0; i < 50; ++i) prompt.push_back(static_cast<int32_t>(rng() % kVocab));
                     for (int i = 0; i < 30; ++i) output.push_back(static_cast<int32_t>(rng() % kVocab));
                     // ~300 distinct ascending ids, 50 of them among the penalised
                     // tokens (an id both biased and penalised), values in [-100, 100].
                     std::vector<int32_t> ids(output.begin(), output.begin() + 10);
                     ids.insert(ids.end(), prompt.begin(), prompt.begin() + 40);
                     while (ids.size() < 300) ids.push_back(static_cast<int32_t>(rng() % kVocab));
                     std::sort(ids.begin(), ids.end());
                     ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
                     std::vector<float> values(ids.size());
                     std::uniform_real_distribution<float> bias(-100.0f, 100.0f);
                     for (float& v : values) v = bias(rng);
                     std::vector<uint32_t> mask(static_cast<size_t>(kVocab / 32));
                     for (uint32_t& word : mask) word = static_cast<uint32_t>(rng());
                     std::vector<seatrt_sampling_row> rows = neutral_rows(rows_n);
                     for (auto& r : rows) {
                       r.bias_ids = ids.data();
                       r.bias_values = values.data();
                       r.num_bias = static_cast<int64_t>(ids.size());
                     }
                     penalise(rows[1], prompt, output, mask);
                     rows[2].temperature = 0.8f;  // top-k 1: the draw is the biased argmax
                     rows[2].top_k = 1;
                     rows[2].seed = rng();
                     const Sampled s = sample_rows(p, logits, rows);
                     Outputs o;
                     for (int64_t b = 0; b < rows_n; ++b) {
                       o.exact.push_back(s.non_finite[static_cast<size_t>(b)]);
                       o.exact.push_back(s.token[static_cast<size_t>(b)]);
                       o.approx.push_back(s.logprob[static_cast<size_t>(b)]);
                       add_top(o, s, b);
                     }
                     return o;
                   }});
}

}  // namespace seatrt::conformance
