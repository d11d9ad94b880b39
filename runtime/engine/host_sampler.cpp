#include "host_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

namespace seatrt::engine {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A uniform double in [0, 1) from (seed, step).
double uniform(uint64_t seed, uint64_t step) {
  const uint64_t bits = splitmix64(splitmix64(seed) ^ step);
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

bool allowed(std::span<const uint32_t> mask, size_t id) {
  if (mask.empty()) return true;
  const size_t word = id / 32;
  return word < mask.size() && ((mask[word] >> (id % 32)) & 1u);
}

}  // namespace

SampleResult sample_on_host(const SampleInput& in) {
  SampleResult out;
  const auto& p = *in.params;
  const size_t vocab = in.logits.size();
  for (float v : in.logits) {
    if (!std::isfinite(v)) {
      out.non_finite = true;
      return out;
    }
  }
  // Raw log-softmax for the reported logprobs.
  const float max_raw = *std::max_element(in.logits.begin(), in.logits.end());
  double sum = 0;
  for (float v : in.logits) sum += std::exp(static_cast<double>(v - max_raw));
  const double log_z = static_cast<double>(max_raw) + std::log(sum);
  auto raw_logprob = [&](size_t id) { return static_cast<float>(static_cast<double>(in.logits[id]) - log_z); };

  // Adjusted logits: the bias first, then the penalties (kernels.h).
  std::vector<float> adj(in.logits.begin(), in.logits.end());
  for (size_t i = 0; i < p.bias_ids.size(); ++i) {
    const int32_t t = p.bias_ids[i];
    if (t >= 0 && static_cast<size_t>(t) < vocab) adj[static_cast<size_t>(t)] += p.bias_values[i];
  }
  if (p.repetition_penalty != 1.0f) {
    auto penalise = [&](int32_t t) {
      if (t < 0 || static_cast<size_t>(t) >= vocab) return;
      float& v = adj[static_cast<size_t>(t)];
      v = v > 0 ? v / p.repetition_penalty : v * p.repetition_penalty;
    };
    std::vector<bool> seen(vocab, false);
    for (auto span : {in.prompt_tokens, in.output_tokens})
      for (int32_t t : span)
        if (t >= 0 && static_cast<size_t>(t) < vocab && !seen[static_cast<size_t>(t)]) {
          seen[static_cast<size_t>(t)] = true;
          penalise(t);
        }
  }
  if (p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f) {
    std::unordered_map<int32_t, int32_t> counts;
    for (int32_t t : in.output_tokens) ++counts[t];
    for (auto [t, c] : counts) {
      if (t < 0 || static_cast<size_t>(t) >= vocab) continue;
      adj[static_cast<size_t>(t)] -= p.presence_penalty + p.frequency_penalty * static_cast<float>(c);
    }
  }
  for (size_t i = 0; i < vocab; ++i)
    if (!allowed(in.allowed_mask, i)) adj[i] = -std::numeric_limits<float>::infinity();

  int32_t chosen = -1;
  if (p.temperature <= 0.0f) {
    float best = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < vocab; ++i)
      if (adj[i] > best) {
        best = adj[i];
        chosen = static_cast<int32_t>(i);
      }
  } else {
    // Candidates sorted by adjusted logit (descending, lower id on ties).
    std::vector<int32_t> order(vocab);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return adj[static_cast<size_t>(a)] > adj[static_cast<size_t>(b)]; });
    size_t keep = vocab;
    while (keep > 0 && std::isinf(adj[static_cast<size_t>(order[keep - 1])])) --keep;
    if (p.top_k > 0) keep = std::min(keep, static_cast<size_t>(p.top_k));
    std::vector<double> prob(keep);
    const double top = static_cast<double>(adj[static_cast<size_t>(order[0])]) / p.temperature;
    double z = 0;
    for (size_t i = 0; i < keep; ++i) {
      prob[i] = std::exp(static_cast<double>(adj[static_cast<size_t>(order[i])]) / p.temperature - top);
      z += prob[i];
    }
    for (auto& v : prob) v /= z;
    if (p.min_p > 0.0f) {
      const double floor = static_cast<double>(p.min_p) * prob[0];
      while (keep > 1 && prob[keep - 1] < floor) --keep;
    }
    if (p.top_p < 1.0f) {
      double cum = 0;
      size_t k = 0;
      while (k < keep) {
        cum += prob[k++];
        if (cum >= static_cast<double>(p.top_p)) break;
      }
      keep = std::max<size_t>(k, 1);
    }
    double total = 0;
    for (size_t i = 0; i < keep; ++i) total += prob[i];
    const double u = uniform(p.seed, in.step) * total;
    double acc = 0;
    chosen = order[keep - 1];
    for (size_t i = 0; i < keep; ++i) {
      acc += prob[i];
      if (u < acc) {
        chosen = order[i];
        break;
      }
    }
  }
  if (chosen < 0) {  // every token masked out
    out.non_finite = false;
    out.event.token = -1;
    return out;
  }
  out.event.token = chosen;
  out.event.logprob = raw_logprob(static_cast<size_t>(chosen));
  if (p.num_top_logprobs > 0) {
    const size_t k = std::min(static_cast<size_t>(p.num_top_logprobs), vocab);
    std::vector<int32_t> ids(vocab);
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(), [&](int32_t a, int32_t b) {
      const float va = in.logits[static_cast<size_t>(a)], vb = in.logits[static_cast<size_t>(b)];
      return va != vb ? va > vb : a < b;
    });
    for (size_t i = 0; i < k; ++i) {
      out.event.top_ids.push_back(ids[i]);
      out.event.top_logprobs.push_back(raw_logprob(static_cast<size_t>(ids[i])));
    }
  }
  return out;
}

std::string sampling_params_problem(const SamplingParams& p, int32_t vocab) {
  if (!(std::isfinite(p.temperature) && p.temperature >= 0.0f)) return "temperature must be finite and >= 0";
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return "top_p must be in (0, 1]";
  if (p.top_k < 0) return "top_k is negative";
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) return "min_p must be in [0, 1]";
  if (!std::isfinite(p.presence_penalty) || !std::isfinite(p.frequency_penalty))
    return "presence/frequency penalties must be finite";
  if (!(std::isfinite(p.repetition_penalty) && p.repetition_penalty > 0.0f))
    return "repetition_penalty must be finite and > 0";
  if (p.bias_ids.size() != p.bias_values.size()) return "logit_bias has " + std::to_string(p.bias_ids.size()) +
                                                        " ids but " + std::to_string(p.bias_values.size()) + " values";
  for (size_t i = 0; i < p.bias_ids.size(); ++i) {
    const std::string entry = "logit_bias token " + std::to_string(p.bias_ids[i]);
    if (p.bias_ids[i] < 0 || p.bias_ids[i] >= vocab)
      return entry + " is outside the vocabulary [0, " + std::to_string(vocab) + ")";
    if (i > 0 && p.bias_ids[i] <= p.bias_ids[i - 1]) return entry + " is out of order or repeated";
    if (!std::isfinite(p.bias_values[i])) return entry + " has a bias that is not finite";
  }
  return "";
}

}  // namespace seatrt::engine
