#include "metrics.hpp"

#include <cstdio>

namespace seatrt::server {

namespace {
std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++total_;
}

void Histogram::render(const std::string& name, std::string& out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + num(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(total_) + "\n";
  out += name + "_sum " + num(sum_) + "\n";
  out += name + "_count " + std::to_string(total_) + "\n";
}

Metrics::Metrics()
    : ttft_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      itl_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}) {}

void Metrics::count_request(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{endpoint, status}];
}

void Metrics::add_tokens(int64_t prompt, int64_t generated) {
  std::lock_guard lock(mutex_);
  prompt_tokens_ += static_cast<uint64_t>(prompt);
  generated_tokens_ += static_cast<uint64_t>(generated);
}

void Metrics::observe_ttft(double seconds) {
  std::lock_guard lock(mutex_);
  ttft_.observe(seconds);
}

void Metrics::observe_itl(double seconds) {
  std::lock_guard lock(mutex_);
  itl_.observe(seconds);
}

std::string Metrics::render(const engine::EngineStats& s) const {
  std::lock_guard lock(mutex_);
  std::string out;
  auto head = [&](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  // A metric with one value and no labels.
  auto one = [&](const char* name, const char* type, const char* help, const std::string& value) {
    head(name, type, help);
    out += std::string(name) + " " + value + "\n";
  };
  head("seatrt_requests_total", "counter", "HTTP requests by endpoint and status code.");
  for (const auto& [key, n] : requests_)
    out += "seatrt_requests_total{endpoint=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  one("seatrt_prompt_tokens_total", "counter",
      "Prompt tokens of every generation that started (finished, failed or left by its client), each prompt once.",
      std::to_string(prompt_tokens_));
  one("seatrt_generation_tokens_total", "counter", "Generated tokens.", std::to_string(generated_tokens_));
  head("seatrt_time_to_first_token_seconds", "histogram", "Time from request to first generated token.");
  ttft_.render("seatrt_time_to_first_token_seconds", out);
  head("seatrt_inter_token_latency_seconds", "histogram", "Time between consecutive streamed tokens.");
  itl_.render("seatrt_inter_token_latency_seconds", out);
  one("seatrt_queue_depth", "gauge", "Sequences waiting for admission.", std::to_string(s.waiting));
  one("seatrt_running_sequences", "gauge", "Sequences in the running batch.", std::to_string(s.running));
  one("seatrt_kv_blocks_used", "gauge", "KV blocks referenced by sequences.", std::to_string(s.blocks_used));
  one("seatrt_kv_blocks_total", "gauge", "KV blocks in the pool.", std::to_string(s.blocks_total));
  one("seatrt_preemptions_total", "counter",
      "Sequences preempted (recomputed later) because the pool was full.",
      std::to_string(s.preemptions));
  one("seatrt_slow_output_sequences_total", "counter",
      "Sequences whose output callback (a parser plugin) took over 10 ms, so their later ones ran off the engine "
      "thread.",
      std::to_string(s.slow_callback_sequences));
  one("seatrt_engine_steps_total", "counter", "Engine steps that ran a batch.", std::to_string(s.steps));
  one("seatrt_engine_step_seconds_total", "counter",
      "Time in engine steps that ran a batch.",
      std::to_string(s.step_seconds));
  one("seatrt_engine_model_seconds_total", "counter",
      "Time within those steps in the model runner's forward and sample calls; the rest is host work the device "
      "waits through.",
      std::to_string(s.model_seconds));
  one("seatrt_non_finite_logits_total", "counter",
      "Sampling steps whose logits held NaN or infinity.",
      std::to_string(s.non_finite));
  return out;
}

}  // namespace seatrt::server
