// sample over a Gemma-4 vocabulary (262144): greedy rows (plain, with
// penalties and an allowed-token mask, with a planted tie), a seeded
// temperature/top-k/top-p/min-p row, and a row holding a NaN.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cases.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

constexpr int64_t kVocab = 262144;
constexpr int32_t kTop = 20;

}  // namespace

void add_sample_cases(std::vector<Case>& cases) {
  cases.push_back({"sample", "F32 [5, 262144]: greedy, penalties+mask, tie, seeded top-k/p, NaN row", kBoundF32,
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
                     std::vector<seatrt_sampling_row> rows(static_cast<size_t>(rows_n));
                     for (auto& r : rows) {
                       r = {};
                       r.struct_size = sizeof r;
                       r.top_p = 1.0f;
                       r.repetition_penalty = 1.0f;
                     }
                     rows[1].repetition_penalty = 1.3f;
                     rows[1].presence_penalty = 0.5f;
                     rows[1].frequency_penalty = 0.2f;
                     rows[1].prompt_tokens = prompt.data();
                     rows[1].num_prompt_tokens = static_cast<int64_t>(prompt.size());
                     rows[1].output_tokens = output.data();
                     rows[1].num_output_tokens = static_cast<int64_t>(output.size());
                     rows[1].allowed_mask = mask.data();
                     rows[1].allowed_mask_words = static_cast<int64_t>(mask.size());
                     rows[2].temperature = 0.8f;
                     rows[2].top_k = 40;
                     rows[2].top_p = 0.95f;
                     rows[2].min_p = 0.05f;
                     rows[2].seed = rng();
                     rows[2].step = rng() % 1000;
                     DeviceTensor dl(p, logits);
                     std::vector<int32_t> token(rows_n, -7), top_ids(rows_n * kTop, -7), non_finite(rows_n, -7);
                     std::vector<float> logprob(rows_n, 0.0f), top_lp(rows_n * kTop, 0.0f);
                     seatrt_sample_args args{};
                     args.struct_size = sizeof args;
                     args.logits = dl.get();
                     args.rows = rows.data();
                     args.num_top = kTop;
                     args.token = token.data();
                     args.logprob = logprob.data();
                     args.top_ids = top_ids.data();
                     args.top_logprobs = top_lp.data();
                     args.non_finite = non_finite.data();
                     call_op(p, &seatrt_kernel_api::sample, args, "sample");

                     Outputs o;
                     for (int64_t b = 0; b < rows_n; ++b) {
                       o.exact.push_back(non_finite[static_cast<size_t>(b)]);
                       if (b == 3) {  // the NaN row: token -1, nothing else is meaningful
                         o.exact.push_back(token[static_cast<size_t>(b)]);
                         continue;
                       }
                       const double* row = nullptr;
                       std::vector<double> raw(static_cast<size_t>(kVocab));
                       for (int64_t i = 0; i < kVocab; ++i) raw[static_cast<size_t>(i)] = logits.at(b * kVocab + i);
                       row = raw.data();
                       const double mx = *std::max_element(raw.begin(), raw.end());
                       double sum = 0;
                       for (double v : raw) sum += std::exp(v - mx);
                       const double lse = mx + std::log(sum);
                       const int32_t t = token[static_cast<size_t>(b)];
                       if (b == 2) {
                         // The draw itself may differ between providers; it must come from
                         // the 40 largest logits and carry its own raw logprob.
                         std::vector<int32_t> ids(static_cast<size_t>(kVocab));
                         std::iota(ids.begin(), ids.end(), 0);
                         std::partial_sort(ids.begin(), ids.begin() + 40, ids.end(),
                                           [&](int32_t x, int32_t y) { return row[x] > row[y] || (row[x] == row[y] && x < y); });
                         const bool in_top = t >= 0 && std::find(ids.begin(), ids.begin() + 40, t) != ids.begin() + 40;
                         const bool lp_ok = in_top && std::fabs(logprob[static_cast<size_t>(b)] - (row[t] - lse)) < 1e-3;
                         o.exact.push_back(in_top && lp_ok ? 1 : 0);
                       } else {
                         o.exact.push_back(t);
                         o.approx.push_back(logprob[static_cast<size_t>(b)]);
                       }
                       for (int32_t i = 0; i < kTop; ++i) {
                         o.exact.push_back(top_ids[static_cast<size_t>(b * kTop + i)]);
                         o.approx.push_back(top_lp[static_cast<size_t>(b * kTop + i)]);
                       }
                     }
                     return o;
                   }});
}

}  // namespace seatrt::conformance
