// sample: one token per row of logits [B, V].  Order of processing (vLLM's):
// logit bias, repetition penalty (prompt + output tokens), frequency and presence
// penalties (output tokens), allowed-token mask, then greedy argmax
// (temperature < 1e-5; lowest id on ties) or: divide by temperature, min_p,
// top_k, top_p, and an inverse-CDF draw over the survivors sorted by
// (logit desc, id asc) with u from sampling_rng.hpp.  Logprobs come from the
// RAW logits.  A row whose raw logits hold NaN/inf gets non_finite = 1 and
// token -1.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

#include "ops.hpp"
#include "parallel.hpp"
#include "sampling_rng.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

constexpr const char* kOp = "sample";
constexpr float kGreedyBelow = 1e-5f;

int64_t bias_count(const seatrt_sampling_row& row) {
  return row.struct_size >= offsetof(seatrt_sampling_row, num_bias) + sizeof row.num_bias ? row.num_bias : 0;
}

bool allowed(const seatrt_sampling_row& row, int64_t id) {
  return !row.allowed_mask || ((row.allowed_mask[id / 32] >> (id % 32)) & 1u) != 0;
}

void check_row(const seatrt_sampling_row& row, int64_t b, int64_t vocab) {
  const std::string at = "rows[" + std::to_string(b) + "]";
  // An older caller's row ends before the bias fields: no bias.
  if (row.struct_size < offsetof(seatrt_sampling_row, bias_ids)) invalid(kOp, at + ".struct_size is too small");
  if (!(std::isfinite(row.temperature) && row.temperature >= 0.0f)) invalid(kOp, at + ".temperature must be finite and >= 0");
  if (!(row.top_p > 0.0f && row.top_p <= 1.0f)) invalid(kOp, at + ".top_p must be in (0, 1]");
  if (row.top_k < 0) invalid(kOp, at + ".top_k is negative");
  if (!(row.min_p >= 0.0f && row.min_p <= 1.0f)) invalid(kOp, at + ".min_p must be in [0, 1]");
  if (!std::isfinite(row.presence_penalty) || !std::isfinite(row.frequency_penalty)) {
    invalid(kOp, at + ": presence/frequency penalties must be finite");
  }
  if (!(std::isfinite(row.repetition_penalty) && row.repetition_penalty > 0.0f)) {
    invalid(kOp, at + ".repetition_penalty must be finite and > 0");
  }
  const auto check_tokens = [&](const int32_t* tokens, int64_t n, const char* name) {
    if (n < 0) invalid(kOp, at + "." + name + " count is negative");
    if (n > 0 && !tokens) invalid(kOp, at + "." + name + " is NULL");
    for (int64_t i = 0; i < n; ++i) {
      if (tokens[i] < 0 || tokens[i] >= vocab) {
        invalid(kOp, at + "." + name + "[" + std::to_string(i) + "] = " + std::to_string(tokens[i]) +
                         " is outside the vocabulary of " + std::to_string(vocab));
      }
    }
  };
  check_tokens(row.prompt_tokens, row.num_prompt_tokens, "prompt_tokens");
  check_tokens(row.output_tokens, row.num_output_tokens, "output_tokens");
  if (row.allowed_mask) {
    if (row.allowed_mask_words < (vocab + 31) / 32) {
      invalid(kOp, at + ".allowed_mask has " + std::to_string(row.allowed_mask_words) + " words, the vocabulary needs " +
                       std::to_string((vocab + 31) / 32));
    }
    bool any = false;
    for (int64_t id = 0; id < vocab && !any; ++id) any = allowed(row, id);
    if (!any) invalid(kOp, at + ".allowed_mask allows no token");
  }
  const int64_t num_bias = bias_count(row);
  if (num_bias < 0) invalid(kOp, at + ".num_bias is negative");
  if (num_bias > 0 && (!row.bias_ids || !row.bias_values)) invalid(kOp, at + ".bias_ids/bias_values are NULL");
  for (int64_t i = 0; i < num_bias; ++i) {
    const std::string entry = at + ".bias_ids[" + std::to_string(i) + "] = " + std::to_string(row.bias_ids[i]);
    if (row.bias_ids[i] < 0 || row.bias_ids[i] >= vocab)
      invalid(kOp, entry + " is outside the vocabulary of " + std::to_string(vocab));
    if (i > 0 && row.bias_ids[i] <= row.bias_ids[i - 1]) invalid(kOp, entry + " is not above the one before");
    if (!std::isfinite(row.bias_values[i])) invalid(kOp, at + ".bias_values[" + std::to_string(i) + "] is not finite");
  }
}

// Logit bias, then penalties and mask, applied to a copy of the raw logits.
void apply_bias(const seatrt_sampling_row& row, std::vector<float>& z) {
  const int64_t n = bias_count(row);
  for (int64_t i = 0; i < n; ++i) z[static_cast<size_t>(row.bias_ids[i])] += row.bias_values[i];
}

// Penalties and mask, after the bias.
void apply_penalties(const seatrt_sampling_row& row, std::vector<float>& z) {
  const int64_t vocab = static_cast<int64_t>(z.size());
  if (row.repetition_penalty != 1.0f) {
    std::vector<char> seen(z.size(), 0);
    for (int64_t i = 0; i < row.num_prompt_tokens; ++i) seen[static_cast<size_t>(row.prompt_tokens[i])] = 1;
    for (int64_t i = 0; i < row.num_output_tokens; ++i) seen[static_cast<size_t>(row.output_tokens[i])] = 1;
    for (size_t id = 0; id < z.size(); ++id) {
      if (seen[id]) z[id] = z[id] > 0.0f ? z[id] / row.repetition_penalty : z[id] * row.repetition_penalty;
    }
  }
  if (row.frequency_penalty != 0.0f || row.presence_penalty != 0.0f) {
    std::vector<int32_t> count(z.size(), 0);
    for (int64_t i = 0; i < row.num_output_tokens; ++i) ++count[static_cast<size_t>(row.output_tokens[i])];
    for (size_t id = 0; id < z.size(); ++id) {
      if (count[id] > 0) {
        z[id] -= row.frequency_penalty * static_cast<float>(count[id]) + row.presence_penalty;
      }
    }
  }
  if (row.allowed_mask) {
    for (int64_t id = 0; id < vocab; ++id) {
      if (!allowed(row, id)) z[static_cast<size_t>(id)] = -std::numeric_limits<float>::infinity();
    }
  }
}

int32_t draw(const seatrt_sampling_row& row, std::vector<float>& z) {
  if (row.temperature < kGreedyBelow) {
    // max_element returns the first maximum: the lowest id on ties.
    return static_cast<int32_t>(std::max_element(z.begin(), z.end()) - z.begin());
  }
  for (float& v : z) v /= row.temperature;
  std::vector<int32_t> order;
  order.reserve(z.size());
  for (size_t id = 0; id < z.size(); ++id) {
    if (z[id] != -std::numeric_limits<float>::infinity()) order.push_back(static_cast<int32_t>(id));
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return z[static_cast<size_t>(a)] > z[static_cast<size_t>(b)] || (z[static_cast<size_t>(a)] == z[static_cast<size_t>(b)] && a < b);
  });
  const double z_max = z[static_cast<size_t>(order[0])];
  std::vector<double> p(order.size());
  for (size_t i = 0; i < order.size(); ++i) p[i] = std::exp(static_cast<double>(z[static_cast<size_t>(order[i])]) - z_max);
  size_t keep = order.size();
  if (row.min_p > 0.0f) {  // p_i / p_max < min_p is dropped; p_max's own ratio is 1
    keep = static_cast<size_t>(std::find_if(p.begin(), p.end(), [&](double v) { return v < row.min_p; }) - p.begin());
  }
  if (row.top_k > 0) keep = std::min(keep, static_cast<size_t>(row.top_k));
  if (row.top_p < 1.0f) {
    const double total = std::accumulate(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(keep), 0.0);
    double cum = 0.0;
    size_t n = 0;
    while (n < keep) {
      cum += p[n++];
      if (cum >= static_cast<double>(row.top_p) * total) break;
    }
    keep = n;
  }
  const double total = std::accumulate(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(keep), 0.0);
  const double target = uniform_draw(row.seed, row.step) * total;
  double cum = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    cum += p[i];
    if (target < cum) return order[i];
  }
  return order[keep - 1];
}

}  // namespace

void sample(Context& ctx, const seatrt_sample_args& args) {
  const seatrt_tensor& logits = need_tensor(args.logits, kOp, "logits");
  need_ndim(logits, kOp, "logits", 2);
  need_dtype(logits, kOp, "logits", kActivationDtypes);
  const int64_t batch = logits.shape[0];
  const int64_t vocab = logits.shape[1];
  if (vocab < 1) invalid(kOp, "logits have no vocabulary entries");
  if (args.num_top < 0 || args.num_top > 20 || args.num_top > vocab) {
    invalid(kOp, "num_top " + std::to_string(args.num_top) + " is outside 0..min(20, vocab)");
  }
  if (batch > 0 && !args.rows) invalid(kOp, "rows is NULL");
  if (batch > 0 && !args.token) invalid(kOp, "token is NULL");
  if (batch > 0 && args.num_top > 0 && (!args.top_ids || !args.top_logprobs)) {
    invalid(kOp, "top_ids/top_logprobs are NULL with num_top " + std::to_string(args.num_top));
  }
  for (int64_t b = 0; b < batch; ++b) check_row(args.rows[b], b, vocab);
  const Rows logit_rows(logits);
  const int64_t num_top = args.num_top;
  ctx.pool.parallel_for(batch, [&](int64_t b) {
    const seatrt_sampling_row& row = args.rows[b];
    std::vector<float> raw(static_cast<size_t>(vocab));
    logit_rows.load(b, raw.data());
    const bool finite = std::all_of(raw.begin(), raw.end(), [](float v) { return std::isfinite(v); });
    if (args.non_finite) args.non_finite[b] = finite ? 0 : 1;
    if (!finite) {
      args.token[b] = -1;
      if (args.logprob) args.logprob[b] = std::numeric_limits<float>::quiet_NaN();
      for (int64_t i = 0; i < num_top; ++i) {
        args.top_ids[b * num_top + i] = -1;
        args.top_logprobs[b * num_top + i] = std::numeric_limits<float>::quiet_NaN();
      }
      return;
    }
    const float max_raw = *std::max_element(raw.begin(), raw.end());
    double sum = 0.0;
    for (float v : raw) sum += std::exp(static_cast<double>(v) - max_raw);
    const double lse = max_raw + std::log(sum);
    if (num_top > 0) {
      std::vector<int32_t> ids(raw.size());
      std::iota(ids.begin(), ids.end(), 0);
      std::partial_sort(ids.begin(), ids.begin() + num_top, ids.end(), [&](int32_t x, int32_t y) {
        return raw[static_cast<size_t>(x)] > raw[static_cast<size_t>(y)] ||
               (raw[static_cast<size_t>(x)] == raw[static_cast<size_t>(y)] && x < y);
      });
      for (int64_t i = 0; i < num_top; ++i) {
        const int32_t id = ids[static_cast<size_t>(i)];
        args.top_ids[b * num_top + i] = id;
        args.top_logprobs[b * num_top + i] = static_cast<float>(raw[static_cast<size_t>(id)] - lse);
      }
    }
    std::vector<float> z = raw;
    apply_bias(row, z);
    apply_penalties(row, z);
    const int32_t token = draw(row, z);
    args.token[b] = token;
    if (args.logprob) args.logprob[b] = static_cast<float>(raw[static_cast<size_t>(token)] - lse);
  });
}

}  // namespace seatrt::cpu
