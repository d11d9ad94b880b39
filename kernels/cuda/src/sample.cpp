// sample: every row is sampled on the device (k_sample.cu); the host
// checks the arguments, uploads each row's parameters, penalised token lists,
// logit bias and allowed-token mask into scratch memory, and copies back one small
// result per row (token, logprob, top logprobs, non-finite flag).
//
// The rule is the CPU provider's (kernels/cpu/op_sample.cpp), so that a
// seeded request draws the same token on either provider: logit bias,
// repetition penalty (prompt + output tokens), frequency and presence penalties (output
// tokens), allowed-token mask, then greedy (temperature < 1e-5, lowest id on
// ties) or: divide by temperature, min_p, top_k, top_p, and an inverse-CDF
// draw over the survivors sorted by (logit desc, id asc), with u = the top
// 53 bits of the (step + 1)-th SplitMix64 output seeded with `seed`.
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "context.hpp"
#include "k_sample.cuh"
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

int64_t bias_count(const seatrt_sampling_row& r) {
  return r.struct_size >= offsetof(seatrt_sampling_row, num_bias) + sizeof r.num_bias ? r.num_bias : 0;
}

bool allowed(const seatrt_sampling_row& r, int64_t id) {
  return !r.allowed_mask || ((r.allowed_mask[id / 32] >> (id % 32)) & 1u) != 0;
}

void check_row(const seatrt_sampling_row& r, int64_t b, int64_t vocab) {
  const std::string op = "sample";
  const std::string n = "rows[" + std::to_string(b) + "]";
  // A shorter row (an older caller) ends before the bias fields: no bias.
  if (r.struct_size < offsetof(seatrt_sampling_row, bias_ids)) invalid(op, n + ".struct_size is too small");
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
  const int64_t nb = bias_count(r);
  if (nb < 0) invalid(op, n + ".num_bias is negative");
  if (nb > 0 && (!r.bias_ids || !r.bias_values)) invalid(op, n + ".bias_ids/bias_values are NULL");
  for (int64_t i = 0; i < nb; ++i) {
    const std::string at = n + ".bias_ids[" + std::to_string(i) + "]";
    if (r.bias_ids[i] < 0 || r.bias_ids[i] >= vocab) invalid(op, at + " is outside the vocabulary");
    if (i > 0 && r.bias_ids[i] <= r.bias_ids[i - 1]) invalid(op, at + " is not above the one before");
    if (!std::isfinite(r.bias_values[i])) invalid(op, n + ".bias_values[" + std::to_string(i) + "] is not finite");
  }
}

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Uploads the rows' parameters, token lists and masks, samples on the
// device and writes the results into the caller's arrays.
void run_on_device(seatrt_kernel_context* ctx, seatrt_stream s, const seatrt_sample_args& a, const Mat& m) {
  const int64_t B = m.rows, V = m.cols;
  const int64_t mask_words = (V + 31) / 32;
  std::vector<SampleRowParams> params(static_cast<size_t>(B));
  int64_t num_tokens = 0, num_masks = 0, num_bias = 0;
  bool any_penalty = false;
  for (int64_t b = 0; b < B; ++b) {
    const seatrt_sampling_row& r = a.rows[b];
    SampleRowParams& p = params[static_cast<size_t>(b)];
    p.greedy = r.temperature < kGreedyBelow ? 1 : 0;
    p.temperature = r.temperature;
    p.top_p = r.top_p;
    p.top_k = r.top_k;
    p.min_p = r.min_p;
    p.presence = r.presence_penalty;
    p.frequency = r.frequency_penalty;
    p.repetition = r.repetition_penalty;
    p.u = uniform_draw(r.seed, r.step);
    p.penalize_prompt = r.repetition_penalty != 1.0f ? 1 : 0;
    p.penalize_output = p.penalize_prompt || r.presence_penalty != 0.0f || r.frequency_penalty != 0.0f ? 1 : 0;
    if (p.penalize_prompt) {
      p.prompt_offset = num_tokens;
      p.num_prompt = r.num_prompt_tokens;
      num_tokens += r.num_prompt_tokens;
    }
    if (p.penalize_output) {
      p.output_offset = num_tokens;
      p.num_output = r.num_output_tokens;
      num_tokens += r.num_output_tokens;
      any_penalty = true;
    }
    if (r.allowed_mask) p.mask_offset = mask_words * num_masks++;
    p.num_bias = bias_count(r);
    p.bias_offset = num_bias;
    num_bias += p.num_bias;
  }
  // Scratch: [params | tokens | masks | bias ids | bias values] (uploaded)
  // [results] [z] [counts].
  const size_t params_bytes = aligned(sizeof(SampleRowParams) * static_cast<size_t>(B));
  const size_t tokens_bytes = aligned(sizeof(int32_t) * static_cast<size_t>(num_tokens));
  const size_t masks_bytes = aligned(sizeof(uint32_t) * static_cast<size_t>(mask_words * num_masks));
  const size_t bias_bytes = aligned(sizeof(int32_t) * static_cast<size_t>(num_bias));  // ids; values the same
  const size_t upload_bytes = params_bytes + tokens_bytes + masks_bytes + 2 * bias_bytes;
  const size_t results_bytes = aligned(sizeof(SampleRowResult) * static_cast<size_t>(B));
  const size_t z_bytes = aligned(sizeof(float) * static_cast<size_t>(B * V));
  const size_t counts_bytes = any_penalty ? aligned(sizeof(int32_t) * static_cast<size_t>(B * V)) : 0;
  char* dev = static_cast<char*>(scratch(ctx, s, upload_bytes + results_bytes + z_bytes + counts_bytes));
  char* host = static_cast<char*>(pinned(ctx, upload_bytes + results_bytes));
  std::memcpy(host, params.data(), sizeof(SampleRowParams) * params.size());
  auto* tokens = reinterpret_cast<int32_t*>(host + params_bytes);
  auto* masks = reinterpret_cast<uint32_t*>(host + params_bytes + tokens_bytes);
  const size_t bias_at = params_bytes + tokens_bytes + masks_bytes;
  auto* bias_ids = reinterpret_cast<int32_t*>(host + bias_at);
  auto* bias_values = reinterpret_cast<float*>(host + bias_at + bias_bytes);
  for (int64_t b = 0; b < B; ++b) {
    const seatrt_sampling_row& r = a.rows[b];
    const SampleRowParams& p = params[static_cast<size_t>(b)];
    if (p.num_prompt) std::memcpy(tokens + p.prompt_offset, r.prompt_tokens, sizeof(int32_t) * static_cast<size_t>(p.num_prompt));
    if (p.num_output) std::memcpy(tokens + p.output_offset, r.output_tokens, sizeof(int32_t) * static_cast<size_t>(p.num_output));
    if (p.mask_offset >= 0) std::memcpy(masks + p.mask_offset, r.allowed_mask, sizeof(uint32_t) * static_cast<size_t>(mask_words));
    if (p.num_bias) {
      std::memcpy(bias_ids + p.bias_offset, r.bias_ids, sizeof(int32_t) * static_cast<size_t>(p.num_bias));
      std::memcpy(bias_values + p.bias_offset, r.bias_values, sizeof(float) * static_cast<size_t>(p.num_bias));
    }
  }
  cudaStream_t st = static_cast<cudaStream_t>(s);
  check(cudaMemcpyAsync(dev, host, upload_bytes, cudaMemcpyHostToDevice, st), "upload sampling parameters");
  SampleProblem p;
  p.logits = static_cast<const float*>(m.data);
  p.rows = B;
  p.vocab = V;
  p.row_stride = m.row_stride;
  p.num_top = a.num_top;
  p.params = reinterpret_cast<const SampleRowParams*>(dev);
  p.tokens = reinterpret_cast<const int32_t*>(dev + params_bytes);
  p.masks = reinterpret_cast<const uint32_t*>(dev + params_bytes + tokens_bytes);
  p.bias_ids = reinterpret_cast<const int32_t*>(dev + bias_at);
  p.bias_values = reinterpret_cast<const float*>(dev + bias_at + bias_bytes);
  p.results = reinterpret_cast<SampleRowResult*>(dev + upload_bytes);
  p.z = reinterpret_cast<float*>(dev + upload_bytes + results_bytes);
  p.counts = any_penalty ? reinterpret_cast<int32_t*>(dev + upload_bytes + results_bytes + z_bytes) : nullptr;
  check(launch_sample(s, p), "sample launch");
  check(cudaMemcpyAsync(host + upload_bytes, p.results, sizeof(SampleRowResult) * static_cast<size_t>(B),
                        cudaMemcpyDeviceToHost, st),
        "copy sampling results");
  check(cudaStreamSynchronize(st), "execution error while sampling");
  const auto* results = reinterpret_cast<const SampleRowResult*>(host + upload_bytes);
  for (int64_t b = 0; b < B; ++b) {
    const SampleRowResult& res = results[b];
    a.token[b] = res.token;
    if (a.logprob) a.logprob[b] = res.logprob;
    if (a.non_finite) a.non_finite[b] = res.non_finite;
    for (int32_t i = 0; i < a.num_top; ++i) {
      a.top_ids[b * a.num_top + i] = res.top_ids[i];
      a.top_logprobs[b * a.num_top + i] = res.top_logprobs[i];
    }
  }
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
  run_on_device(ctx, s, a, m);
}

}  // namespace seatrt::cuda
