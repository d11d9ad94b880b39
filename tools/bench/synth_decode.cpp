// seatrt-synth-decode: long greedy decode of a checkpoint (the full-size
// synthetic one made by tools/synth/make_synthetic_checkpoint.py) through
// the real pipeline on a chosen kernel provider.  Issue 7 asks for 10,000
// decode steps with no non-finite value; this runs up to --steps steps or
// --seconds of decoding, whichever comes first, and reports the count it
// reached honestly.
//
// The token fed at each step is drawn from the OS random source by default
// (--feed random): a random-weight model with the small post-norm gains that
// keep its routing spread (see the script) decodes greedily into a fixed
// point (the residual is dominated by the current token's embedding, so the
// tied LM head picks that token again), which would exercise one token over
// and over.  --feed greedy feeds the argmax instead.
//
// Per step: every logit is checked for NaN/Inf (the first bad step stops the
// run and fails it).  The first --trace-steps decode steps record the
// router's top-k ids (trace callback) to report the expert spread: distinct
// experts per layer within windows of B consecutive tokens, beside the
// uniform-routing expectation 128 * (1 - (120/128)^B); the prompt's prefill
// spread is reported the same way.  The remaining steps are timed (wall
// clock per step, host argmax and the 1 MB logits copy of the single-
// sequence driver included): batch-1 end-to-end decode tokens/s.
//
//   seatrt-synth-decode MODEL_DIR --provider LIB --plugin-dir DIR
//       [--steps 10000] [--seconds 120] [--prompt-len 32] [--trace-steps 64]
//       [--feed random|greedy] [--json FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e_session.hpp"
#include "seatrt/model/sequence_driver.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::filesystem::path model_dir, provider, plugin_dir, json_out;
  int32_t steps = 10000;
  double seconds = 120;
  int32_t prompt_len = 32;
  int32_t trace_steps = 64;
  bool greedy = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--provider") o.provider = value();
    else if (a == "--plugin-dir") o.plugin_dir = value();
    else if (a == "--steps") o.steps = std::stoi(value());
    else if (a == "--seconds") o.seconds = std::stod(value());
    else if (a == "--prompt-len") o.prompt_len = std::stoi(value());
    else if (a == "--trace-steps") o.trace_steps = std::stoi(value());
    else if (a == "--json") o.json_out = value();
    else if (a == "--feed") {
      const std::string f = value();
      if (f != "random" && f != "greedy") throw std::runtime_error("--feed: '" + f + "' is not random or greedy");
      o.greedy = f == "greedy";
    }
    else if (!a.empty() && a[0] == '-') throw std::runtime_error("unknown option " + a);
    else o.model_dir = a;
  }
  if (o.model_dir.empty() || o.provider.empty() || o.plugin_dir.empty())
    throw std::runtime_error("usage: seatrt-synth-decode MODEL_DIR --provider LIB --plugin-dir DIR [--steps N] "
                             "[--seconds S] [--prompt-len P] [--trace-steps M] [--feed random|greedy] [--json FILE]");
  if (o.steps < 1 || o.prompt_len < 1 || o.trace_steps < 0 || !(o.seconds > 0))
    throw std::runtime_error("--steps, --prompt-len must be >= 1, --trace-steps >= 0, --seconds > 0");
  return o;
}

std::size_t count_nonfinite(const std::vector<float>& v) {
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); }));
}

// Mean over layers and over non-overlapping windows of `b` tokens of the
// number of distinct expert ids.  history[step][layer] = that token's k ids.
double mean_distinct(const std::vector<std::vector<std::vector<int32_t>>>& history, std::size_t b) {
  if (history.size() < b || history.empty()) return NAN;
  const std::size_t layers = history.front().size();
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t start = 0; start + b <= history.size(); start += b) {
    for (std::size_t l = 0; l < layers; ++l) {
      std::set<int32_t> ids;
      for (std::size_t s = start; s < start + b; ++s) ids.insert(history[s][l].begin(), history[s][l].end());
      sum += static_cast<double>(ids.size());
      ++n;
    }
  }
  return sum / static_cast<double>(n);
}

double uniform_expectation(int32_t experts, int32_t k, std::size_t b) {
  return experts * (1.0 - std::pow(1.0 - static_cast<double>(k) / experts, static_cast<double>(b)));
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int run(const Options& o) {
  using seatrt::model::argmax;
  nlohmann::json report;
  const auto t_load = Clock::now();
  auto session = seatrt::e2e::open_session(o.plugin_dir, o.provider);
  const auto& loaded = session->load(o.model_dir, o.prompt_len);
  const double load_s = std::chrono::duration<double>(Clock::now() - t_load).count();
  const auto& info = loaded.info();
  const int32_t vocab = info.vocab_size;
  std::printf("loaded %s in %.1f s: %d layers, hidden %d, vocab %d (arch-reported plain weights %.2f GB)\n",
              o.model_dir.string().c_str(), load_s, info.num_layers, info.hidden_size, vocab,
              static_cast<double>(info.weight_bytes) / 1e9);
  report["load_seconds"] = load_s;

  // A fresh prompt per run (OS random source): nothing cached from before.
  std::random_device os_random;
  std::uniform_int_distribution<int32_t> pick(3, vocab - 1);
  std::vector<int32_t> prompt(static_cast<std::size_t>(o.prompt_len));
  for (auto& id : prompt) id = pick(os_random);

  seatrt::model::SequenceDriver driver(loaded, o.prompt_len + o.steps + 1);
  const auto k = static_cast<std::size_t>(info.is_moe ? 8 : 0);
  std::vector<std::vector<std::vector<int32_t>>> history;  // [step][layer][k]
  std::vector<float> logits;
  double prefill_s = 0;
  {
    std::unique_ptr<seatrt::e2e::TraceIds> trace;
    if (info.is_moe) trace = std::make_unique<seatrt::e2e::TraceIds>(loaded, "router_ids");
    const auto t0 = Clock::now();
    logits = driver.step(prompt, /*all_rows=*/false);
    prefill_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (trace) {
      // Prompt spread: distinct experts per layer over the P prompt tokens.
      double distinct = 0;
      for (const auto& layer : trace->ids()) distinct += static_cast<double>(std::set<int32_t>(layer.begin(), layer.end()).size());
      distinct /= static_cast<double>(trace->ids().size());
      std::printf("prefill %d tokens: %.3f s (trace on); distinct experts per layer over the prompt %.1f "
                  "(uniform routing: %.1f)\n",
                  o.prompt_len, prefill_s, distinct, uniform_expectation(128, 8, static_cast<std::size_t>(o.prompt_len)));
      report["prompt_distinct_experts_per_layer"] = distinct;
    }
  }
  report["prefill_tokens"] = o.prompt_len;
  report["prefill_seconds_with_trace"] = prefill_s;
  if (const std::size_t bad = count_nonfinite(logits)) {
    std::printf("FAIL: %zu non-finite logits after prefill\n", bad);
    return 1;
  }

  std::vector<double> step_ms;
  std::set<int32_t> tokens_seen;
  int32_t steps_done = 0;
  int64_t checked_values = static_cast<int64_t>(logits.size());
  const auto t_decode = Clock::now();
  for (int32_t i = 0; i < o.steps; ++i) {
    const int32_t token = o.greedy ? argmax(logits) : pick(os_random);
    tokens_seen.insert(token);
    const bool traced = info.is_moe && i < o.trace_steps;
    const auto t0 = Clock::now();
    if (traced) {
      seatrt::e2e::TraceIds trace(loaded, "router_ids");
      logits = driver.step(std::span<const int32_t>(&token, 1), /*all_rows=*/false);
      std::vector<std::vector<int32_t>> per_layer;
      for (const auto& layer : trace.ids()) per_layer.emplace_back(layer.begin(), layer.begin() + static_cast<std::ptrdiff_t>(k));
      history.push_back(std::move(per_layer));
    } else {
      logits = driver.step(std::span<const int32_t>(&token, 1), /*all_rows=*/false);
      step_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    ++steps_done;
    checked_values += static_cast<int64_t>(logits.size());
    if (const std::size_t bad = count_nonfinite(logits)) {
      std::printf("FAIL: %zu non-finite logits at decode step %d (position %d)\n", bad, i + 1, o.prompt_len + i);
      report["first_nonfinite_step"] = i + 1;
      break;
    }
    if (std::chrono::duration<double>(Clock::now() - t_decode).count() > o.seconds) break;
  }
  const double decode_s = std::chrono::duration<double>(Clock::now() - t_decode).count();
  const double med = median(step_ms);
  double mean = 0;
  for (double v : step_ms) mean += v;
  mean = step_ms.empty() ? NAN : mean / static_cast<double>(step_ms.size());
  std::printf("decode: %d steps (asked %d) in %.1f s, all %lld logits finite: %s\n", steps_done, o.steps, decode_s,
              static_cast<long long>(checked_values), report.contains("first_nonfinite_step") ? "NO" : "yes");
  std::printf("decode timing over %zu untraced steps: median %.3f ms/step = %.1f tok/s (mean %.3f ms = %.1f tok/s), "
              "final context %d tokens; %zu distinct tokens fed (%s)\n",
              step_ms.size(), med, 1000.0 / med, mean, 1000.0 / mean, driver.length(), tokens_seen.size(), o.greedy ? "greedy" : "random");
  report["feed"] = o.greedy ? "greedy" : "random";
  report["steps_asked"] = o.steps;
  report["steps_done"] = steps_done;
  report["decode_seconds"] = decode_s;
  report["timed_steps"] = step_ms.size();
  report["median_step_ms"] = med;
  report["mean_step_ms"] = mean;
  report["median_tok_per_s"] = 1000.0 / med;
  report["final_context"] = driver.length();
  report["distinct_tokens_fed"] = tokens_seen.size();
  report["all_finite"] = !report.contains("first_nonfinite_step");
  if (!step_ms.empty()) {
    // First and last 500 timed steps: does the step slow down as the context grows?
    const std::size_t w = std::min<std::size_t>(500, step_ms.size());
    report["median_step_ms_first_500"] = median({step_ms.begin(), step_ms.begin() + static_cast<std::ptrdiff_t>(w)});
    report["median_step_ms_last_500"] = median({step_ms.end() - static_cast<std::ptrdiff_t>(w), step_ms.end()});
    std::printf("median ms/step: first %zu timed steps %.3f, last %zu %.3f\n", w,
                report["median_step_ms_first_500"].get<double>(), w, report["median_step_ms_last_500"].get<double>());
  }
  if (!history.empty()) {
    std::printf("expert spread over %zu traced decode steps (distinct experts per layer in windows of B tokens):\n",
                history.size());
    for (std::size_t b : {1u, 4u, 8u, 16u, 32u}) {
      const double d = mean_distinct(history, b);
      if (std::isnan(d)) continue;
      std::printf("  B=%2zu: %6.1f  (uniform routing %.1f)\n", b, d, uniform_expectation(128, 8, b));
      report["decode_distinct_experts"][std::to_string(b)] = d;
    }
  }
  if (!o.json_out.empty()) std::ofstream(o.json_out) << report.dump(2) << "\n";
  return report["all_finite"].get<bool>() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt-synth-decode: error: %s\n", e.what());
    return 2;
  }
}
