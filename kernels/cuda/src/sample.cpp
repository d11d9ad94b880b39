// sample: greedy rows without penalties, mask or top logprobs take a device
// fast path (arg-max and log-sum-exp computed on the GPU, 16 bytes copied
// back per row).  Every other row is copied to pinned host memory and
// sampled here in double precision; that path is exact but costs a 1 MB copy
// per row at the Gemma vocabulary (see README.md, "What is not done").
//
// Order of operations on a row: raw log-softmax for logprob/top entries;
// then mask, repetition penalty (prompt and output tokens), frequency and
// presence penalties (output tokens), temperature, top-k, top-p, min-p, and
// one draw from a counter-based generator keyed by (seed, step).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "context.hpp"
#include "ops.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "views.hpp"

namespace seatrt::cuda {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform double in [0, 1) determined by (seed, step).
double uniform(uint64_t seed, uint64_t step) {
  const uint64_t r = splitmix64(splitmix64(seed) ^ step);
  return static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);
}

bool fast_path(const seatrt_sampling_row& r, int32_t num_top) {
  return num_top == 0 && r.temperature == 0.0f && r.presence_penalty == 0.0f && r.frequency_penalty == 0.0f &&
         r.repetition_penalty == 1.0f && r.allowed_mask == nullptr;
}

void check_row(const seatrt_sampling_row& r, int64_t b, int64_t vocab) {
  const std::string op = "sample";
  const std::string n = "row " + std::to_string(b);
  if (r.struct_size < sizeof(uint32_t)) invalid(op, n + ": struct_size is 0");
  if (!std::isfinite(r.temperature) || r.temperature < 0.0f) invalid(op, n + ": temperature must be >= 0");
  if (!(r.top_p > 0.0f && r.top_p <= 1.0f)) invalid(op, n + ": top_p must be in (0, 1]");
  if (r.top_k < 0) invalid(op, n + ": top_k must be >= 0");
  if (!(r.min_p >= 0.0f && r.min_p <= 1.0f)) invalid(op, n + ": min_p must be in [0, 1]");
  if (!(r.repetition_penalty > 0.0f) || !std::isfinite(r.repetition_penalty))
    invalid(op, n + ": repetition_penalty must be > 0");
  if (!std::isfinite(r.presence_penalty) || !std::isfinite(r.frequency_penalty))
    invalid(op, n + ": penalties must be finite");
  if ((r.num_prompt_tokens > 0 && !r.prompt_tokens) || (r.num_output_tokens > 0 && !r.output_tokens))
    invalid(op, n + ": token list pointer is NULL");
  if (r.allowed_mask && r.allowed_mask_words < (vocab + 31) / 32)
    invalid(op, n + ": allowed_mask has fewer words than the vocabulary needs");
}

struct RowResult {
  int32_t token = -1;
  float logprob = 0.0f;
  int32_t non_finite = 0;
};

RowResult sample_row(const float* raw, int64_t vocab, const seatrt_sampling_row& r, int32_t num_top,
                     int32_t* top_ids, float* top_lp) {
  RowResult res;
  for (int32_t i = 0; i < num_top; ++i) { top_ids[i] = -1; top_lp[i] = -std::numeric_limits<float>::infinity(); }
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < vocab; ++i) {
    if (!std::isfinite(raw[i])) { res.non_finite = 1; return res; }
    mx = std::max(mx, static_cast<double>(raw[i]));
  }
  double sum = 0.0;
  for (int64_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(raw[i]) - mx);
  const double lse = mx + std::log(sum);
  auto better = [&](int64_t a, int64_t b) { return raw[a] > raw[b] || (raw[a] == raw[b] && a < b); };
  if (num_top > 0) {
    std::vector<int64_t> idx(static_cast<size_t>(vocab));
    for (int64_t i = 0; i < vocab; ++i) idx[static_cast<size_t>(i)] = i;
    const int64_t n = std::min<int64_t>(num_top, vocab);
    std::partial_sort(idx.begin(), idx.begin() + n, idx.end(), better);
    for (int64_t i = 0; i < n; ++i) {
      top_ids[i] = static_cast<int32_t>(idx[static_cast<size_t>(i)]);
      top_lp[i] = static_cast<float>(raw[idx[static_cast<size_t>(i)]] - lse);
    }
  }

  // Processed logits.
  std::vector<double> l(raw, raw + vocab);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (r.allowed_mask)
    for (int64_t i = 0; i < vocab; ++i)
      if (!((r.allowed_mask[i / 32] >> (i % 32)) & 1u)) l[static_cast<size_t>(i)] = neg_inf;
  if (r.repetition_penalty != 1.0f) {
    std::vector<char> seen(static_cast<size_t>(vocab), 0);
    for (int64_t i = 0; i < r.num_prompt_tokens; ++i)
      if (r.prompt_tokens[i] >= 0 && r.prompt_tokens[i] < vocab) seen[static_cast<size_t>(r.prompt_tokens[i])] = 1;
    for (int64_t i = 0; i < r.num_output_tokens; ++i)
      if (r.output_tokens[i] >= 0 && r.output_tokens[i] < vocab) seen[static_cast<size_t>(r.output_tokens[i])] = 1;
    for (int64_t i = 0; i < vocab; ++i)
      if (seen[static_cast<size_t>(i)]) {
        double& v = l[static_cast<size_t>(i)];
        v = v > 0 ? v / r.repetition_penalty : v * r.repetition_penalty;
      }
  }
  if (r.frequency_penalty != 0.0f || r.presence_penalty != 0.0f) {
    std::unordered_map<int32_t, int64_t> counts;
    for (int64_t i = 0; i < r.num_output_tokens; ++i)
      if (r.output_tokens[i] >= 0 && r.output_tokens[i] < vocab) ++counts[r.output_tokens[i]];
    for (const auto& [tok, c] : counts)
      l[static_cast<size_t>(tok)] -= r.frequency_penalty * static_cast<double>(c) + r.presence_penalty;
  }
  int64_t best = -1;
  for (int64_t i = 0; i < vocab; ++i)
    if (l[static_cast<size_t>(i)] != neg_inf && (best < 0 || l[static_cast<size_t>(i)] > l[static_cast<size_t>(best)]))
      best = i;
  if (best < 0) invalid("sample", "the allowed mask excludes every token");

  int64_t chosen = best;
  if (r.temperature > 0.0f) {
    // Candidates sorted by processed logit (ties to the lower id).  Tokens
    // more than 745 nats below the best have probability 0 in double.
    const double top = l[static_cast<size_t>(best)];
    std::vector<int64_t> cand;
    for (int64_t i = 0; i < vocab; ++i)
      if ((l[static_cast<size_t>(i)] - top) / r.temperature > -745.0) cand.push_back(i);
    auto by_logit = [&](int64_t a, int64_t b) {
      return l[static_cast<size_t>(a)] > l[static_cast<size_t>(b)] ||
             (l[static_cast<size_t>(a)] == l[static_cast<size_t>(b)] && a < b);
    };
    if (r.top_k > 0 && static_cast<size_t>(r.top_k) < cand.size()) {
      std::partial_sort(cand.begin(), cand.begin() + r.top_k, cand.end(), by_logit);
      cand.resize(static_cast<size_t>(r.top_k));
    } else {
      std::sort(cand.begin(), cand.end(), by_logit);
    }
    std::vector<double> p(cand.size());
    double z = 0.0;
    for (size_t i = 0; i < cand.size(); ++i) {
      p[i] = std::exp((l[static_cast<size_t>(cand[i])] - top) / r.temperature);
      z += p[i];
    }
    size_t keep = cand.size();
    if (r.top_p < 1.0f) {
      double cum = 0.0;
      for (size_t i = 0; i < cand.size(); ++i) {
        cum += p[i] / z;
        if (cum >= r.top_p) { keep = i + 1; break; }
      }
    }
    if (r.min_p > 0.0f) {
      const double floor = r.min_p * p[0];
      size_t i = 1;
      while (i < keep && p[i] >= floor) ++i;
      keep = i;
    }
    double kept = 0.0;
    for (size_t i = 0; i < keep; ++i) kept += p[i];
    const double u = uniform(r.seed, r.step) * kept;
    double cum = 0.0;
    chosen = cand[keep - 1];
    for (size_t i = 0; i < keep; ++i) {
      cum += p[i];
      if (u < cum) { chosen = cand[i]; break; }
    }
  }
  res.token = static_cast<int32_t>(chosen);
  res.logprob = static_cast<float>(raw[chosen] - lse);
  return res;
}

}  // namespace

void sample(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_sample_args* args) {
  const std::string op = "sample";
  if (!args || !args->rows) invalid(op, "args or rows is NULL");
  use_device(ctx);
  const seatrt_sample_args& a = *args;
  const auto& lg = need(op, "logits", a.logits);
  need_dtype(op, "logits", lg, SEATRT_DTYPE_F32);
  const Mat m = as_mat(op, "logits", lg);
  const int64_t B = m.rows, V = m.cols;
  if (V < 1) invalid(op, "empty vocabulary");
  if (V > 0x7fffffff) unsupported(op, "vocabulary too large");
  if (a.num_top < 0 || a.num_top > 20) invalid(op, "num_top must be in 0..20");
  if (!a.token || !a.logprob || !a.non_finite || (a.num_top > 0 && (!a.top_ids || !a.top_logprobs)))
    invalid(op, "an output pointer is NULL");
  for (int64_t b = 0; b < B; ++b) check_row(a.rows[b], b, V);
  if (B == 0) return;

  cudaStream_t st = static_cast<cudaStream_t>(s);
  const size_t stats_bytes = sizeof(RowStats) * static_cast<size_t>(B);
  auto* stats_dev = static_cast<RowStats*>(scratch(ctx, s, stats_bytes));
  check(launch_row_stats(s, static_cast<const float*>(m.data), B, V, m.row_stride, stats_dev), "row stats launch");
  std::vector<int64_t> slow;
  for (int64_t b = 0; b < B; ++b)
    if (!fast_path(a.rows[b], a.num_top)) slow.push_back(b);
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(V);
  char* host = static_cast<char*>(pinned(ctx, stats_bytes + row_bytes * slow.size()));
  check(cudaMemcpyAsync(host, stats_dev, stats_bytes, cudaMemcpyDeviceToHost, st), "copy row stats");
  for (size_t i = 0; i < slow.size(); ++i)
    check(cudaMemcpyAsync(host + stats_bytes + i * row_bytes, static_cast<const float*>(m.data) + slow[i] * m.row_stride,
                          row_bytes, cudaMemcpyDeviceToHost, st),
          "copy logits");
  check(cudaStreamSynchronize(st), "execution error before sampling");
  const auto* stats = reinterpret_cast<const RowStats*>(host);
  for (int64_t b = 0; b < B; ++b) {
    a.non_finite[b] = stats[b].non_finite;
    a.token[b] = stats[b].non_finite ? -1 : stats[b].argmax;
    a.logprob[b] = stats[b].non_finite ? 0.0f : stats[b].max_logit - stats[b].log_sum_exp;
  }
  for (size_t i = 0; i < slow.size(); ++i) {
    const int64_t b = slow[i];
    const auto* raw = reinterpret_cast<const float*>(host + stats_bytes + i * row_bytes);
    const RowResult r = sample_row(raw, V, a.rows[b], a.num_top, a.num_top ? a.top_ids + b * a.num_top : nullptr,
                                   a.num_top ? a.top_logprobs + b * a.num_top : nullptr);
    a.token[b] = r.token;
    a.logprob[b] = r.logprob;
    a.non_finite[b] = r.non_finite;
  }
}

}  // namespace seatrt::cuda
