// sample: greedy rows without penalties, mask or top logprobs take a device
// fast path (arg-max and log-sum-exp computed on the GPU, 16 bytes copied
// back per row).  Every other row is copied to pinned host memory and
// sampled here; that path costs a 1 MB copy per row at the Gemma vocabulary
// (README.md, "What is not done").
//
// The rule is the CPU provider's (kernels/cpu/op_sample.cpp), so that a
// seeded request draws the same token on either provider: repetition
// penalty (prompt + output tokens), frequency and presence penalties (output
// tokens), allowed-token mask, then greedy (temperature < 1e-5, lowest id on
// ties) or: divide by temperature, min_p, top_k, top_p, and an inverse-CDF
// draw over the survivors sorted by (logit desc, id asc), with u = the top
// 53 bits of the (step + 1)-th SplitMix64 output seeded with `seed`.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "context.hpp"
#include "ops.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "views.hpp"

namespace seatrt::cuda {
namespace {

constexpr float kGreedyBelow = 1e-5f;

double uniform_draw(uint64_t seed, uint64_t step) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (step + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

bool fast_path(const seatrt_sampling_row& r, int32_t num_top) {
  return num_top == 0 && r.temperature < kGreedyBelow && r.presence_penalty == 0.0f && r.frequency_penalty == 0.0f &&
         r.repetition_penalty == 1.0f && r.allowed_mask == nullptr;
}

bool allowed(const seatrt_sampling_row& r, int64_t id) {
  return !r.allowed_mask || ((r.allowed_mask[id / 32] >> (id % 32)) & 1u) != 0;
}

void check_row(const seatrt_sampling_row& r, int64_t b, int64_t vocab) {
  const std::string op = "sample";
  const std::string n = "rows[" + std::to_string(b) + "]";
  if (r.struct_size < sizeof(seatrt_sampling_row)) invalid(op, n + ".struct_size is too small");
  if (!std::isfinite(r.temperature) || r.temperature < 0.0f) invalid(op, n + ".temperature must be finite and >= 0");
  if (!(r.top_p > 0.0f && r.top_p <= 1.0f)) invalid(op, n + ".top_p must be in (0, 1]");
  if (r.top_k < 0) invalid(op, n + ".top_k is negative");
  if (!(r.min_p >= 0.0f && r.min_p <= 1.0f)) invalid(op, n + ".min_p must be in [0, 1]");
  if (!(r.repetition_penalty > 0.0f) || !std::isfinite(r.repetition_penalty))
    invalid(op, n + ".repetition_penalty must be finite and > 0");
  if (!std::isfinite(r.presence_penalty) || !std::isfinite(r.frequency_penalty))
    invalid(op, n + ": presence/frequency penalties must be finite");
  const auto tokens = [&](const int32_t* t, int64_t count, const char* name) {
    if (count < 0) invalid(op, n + "." + name + " count is negative");
    if (count > 0 && !t) invalid(op, n + "." + name + " is NULL");
    for (int64_t i = 0; i < count; ++i)
      if (t[i] < 0 || t[i] >= vocab) invalid(op, n + "." + name + "[" + std::to_string(i) + "] is outside the vocabulary");
  };
  tokens(r.prompt_tokens, r.num_prompt_tokens, "prompt_tokens");
  tokens(r.output_tokens, r.num_output_tokens, "output_tokens");
  if (r.allowed_mask) {
    if (r.allowed_mask_words < (vocab + 31) / 32) invalid(op, n + ".allowed_mask has too few words for the vocabulary");
    bool any = false;
    for (int64_t id = 0; id < vocab && !any; ++id) any = allowed(r, id);
    if (!any) invalid(op, n + ".allowed_mask allows no token");
  }
}

struct RowResult {
  int32_t token = -1;
  float logprob = 0.0f;
  int32_t non_finite = 0;
};

void apply_penalties(const seatrt_sampling_row& r, std::vector<float>& z) {
  if (r.repetition_penalty != 1.0f) {
    std::vector<char> seen(z.size(), 0);
    for (int64_t i = 0; i < r.num_prompt_tokens; ++i) seen[static_cast<size_t>(r.prompt_tokens[i])] = 1;
    for (int64_t i = 0; i < r.num_output_tokens; ++i) seen[static_cast<size_t>(r.output_tokens[i])] = 1;
    for (size_t id = 0; id < z.size(); ++id)
      if (seen[id]) z[id] = z[id] > 0.0f ? z[id] / r.repetition_penalty : z[id] * r.repetition_penalty;
  }
  if (r.frequency_penalty != 0.0f || r.presence_penalty != 0.0f) {
    std::vector<int32_t> count(z.size(), 0);
    for (int64_t i = 0; i < r.num_output_tokens; ++i) ++count[static_cast<size_t>(r.output_tokens[i])];
    for (size_t id = 0; id < z.size(); ++id)
      if (count[id] > 0) z[id] -= r.frequency_penalty * static_cast<float>(count[id]) + r.presence_penalty;
  }
  if (r.allowed_mask)
    for (size_t id = 0; id < z.size(); ++id)
      if (!allowed(r, static_cast<int64_t>(id))) z[id] = -std::numeric_limits<float>::infinity();
}

int32_t draw(const seatrt_sampling_row& r, std::vector<float>& z) {
  if (r.temperature < kGreedyBelow) return static_cast<int32_t>(std::max_element(z.begin(), z.end()) - z.begin());
  for (float& v : z) v /= r.temperature;
  std::vector<int32_t> order;
  order.reserve(z.size());
  for (size_t id = 0; id < z.size(); ++id)
    if (z[id] != -std::numeric_limits<float>::infinity()) order.push_back(static_cast<int32_t>(id));
  const auto zs = [&](int32_t id) { return z[static_cast<size_t>(id)]; };
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return zs(a) > zs(b) || (zs(a) == zs(b) && a < b); });
  const double z_max = zs(order[0]);
  std::vector<double> p(order.size());
  for (size_t i = 0; i < order.size(); ++i) p[i] = std::exp(static_cast<double>(zs(order[i])) - z_max);
  size_t keep = order.size();
  if (r.min_p > 0.0f)
    keep = static_cast<size_t>(std::find_if(p.begin(), p.end(), [&](double v) { return v < r.min_p; }) - p.begin());
  if (r.top_k > 0) keep = std::min(keep, static_cast<size_t>(r.top_k));
  if (r.top_p < 1.0f) {
    const double total = std::accumulate(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(keep), 0.0);
    double cum = 0.0;
    size_t n = 0;
    while (n < keep) {
      cum += p[n++];
      if (cum >= static_cast<double>(r.top_p) * total) break;
    }
    keep = n;
  }
  const double total = std::accumulate(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(keep), 0.0);
  const double target = uniform_draw(r.seed, r.step) * total;
  double cum = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    cum += p[i];
    if (target < cum) return order[i];
  }
  return order[keep - 1];
}

RowResult sample_row(const float* raw, int64_t vocab, const seatrt_sampling_row& r, int32_t num_top,
                     int32_t* top_ids, float* top_lp) {
  RowResult res;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (!std::all_of(raw, raw + vocab, [](float v) { return std::isfinite(v); })) {
    res.non_finite = 1;
    res.logprob = nan;
    for (int32_t i = 0; i < num_top; ++i) { top_ids[i] = -1; top_lp[i] = nan; }
    return res;
  }
  const float max_raw = *std::max_element(raw, raw + vocab);
  double sum = 0.0;
  for (int64_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(raw[i]) - max_raw);
  const double lse = max_raw + std::log(sum);
  if (num_top > 0) {
    std::vector<int32_t> ids(static_cast<size_t>(vocab));
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + num_top, ids.end(),
                      [&](int32_t x, int32_t y) { return raw[x] > raw[y] || (raw[x] == raw[y] && x < y); });
    for (int32_t i = 0; i < num_top; ++i) {
      top_ids[i] = ids[static_cast<size_t>(i)];
      top_lp[i] = static_cast<float>(raw[ids[static_cast<size_t>(i)]] - lse);
    }
  }
  std::vector<float> z(raw, raw + vocab);
  apply_penalties(r, z);
  res.token = draw(r, z);
  res.logprob = static_cast<float>(raw[res.token] - lse);
  return res;
}

}  // namespace

void sample(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_sample_args* args) {
  const std::string op = "sample";
  if (!args) invalid(op, "args is NULL");
  if (!args->rows && args->logits && args->logits->ndim >= 1 && args->logits->shape[0] > 0) invalid(op, "rows is NULL");
  use_device(ctx);
  const seatrt_sample_args& a = *args;
  const auto& lg = need(op, "logits", a.logits);
  need_dtype(op, "logits", lg, SEATRT_DTYPE_F32);
  const Mat m = as_mat(op, "logits", lg);
  const int64_t B = m.rows, V = m.cols;
  if (V < 1) invalid(op, "empty vocabulary");
  if (V > 0x7fffffff) unsupported(op, "vocabulary too large");
  if (a.num_top < 0 || a.num_top > 20 || a.num_top > V) invalid(op, "num_top must be in 0..min(20, vocab)");
  if (B > 0 && !a.token) invalid(op, "token is NULL");
  if (B > 0 && a.num_top > 0 && (!a.top_ids || !a.top_logprobs)) invalid(op, "top_ids/top_logprobs are NULL");
  for (int64_t b = 0; b < B; ++b) check_row(a.rows[b], b, V);
  if (B == 0) return;

  std::lock_guard<std::mutex> sampling(ctx->sample_mutex);
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
    if (a.non_finite) a.non_finite[b] = stats[b].non_finite;
    a.token[b] = stats[b].non_finite ? -1 : stats[b].argmax;
    if (a.logprob) a.logprob[b] = stats[b].non_finite ? std::numeric_limits<float>::quiet_NaN()
                                       : stats[b].max_logit - stats[b].log_sum_exp;
  }
  for (size_t i = 0; i < slow.size(); ++i) {
    const int64_t b = slow[i];
    const auto* raw = reinterpret_cast<const float*>(host + stats_bytes + i * row_bytes);
    const RowResult r = sample_row(raw, V, a.rows[b], a.num_top, a.num_top ? a.top_ids + b * a.num_top : nullptr,
                                   a.num_top ? a.top_logprobs + b * a.num_top : nullptr);
    a.token[b] = r.token;
    if (a.logprob) a.logprob[b] = r.logprob;
    if (a.non_finite) a.non_finite[b] = r.non_finite;
  }
}

}  // namespace seatrt::cuda
