// seatrt-step-profile: where one decode step's time goes (issue 7).  Loads a
// checkpoint through the real plugins, runs the engine's AbiModelRunner
// (decode graphs, provider sampling) with the engine's KV manager and batch
// builder, and for each batch size B: prefills B random prompts of P tokens
// in one step, then times decode steps phase by phase on the host clock:
//   host    = KV block allocation + build_step_batch + commit + bookkeeping
//   forward = runner.forward (uploads, the forward or its graph, stream sync)
//   sample  = runner.sample (the provider's sample op, synchronous), or the
//             host sampler when the provider has none
// in both modes (eager, graphs) and with both samplers (temperature 0.8,
// greedy).  Then, when the provider is the CUDA one, a second load with
// its per-op profiler on ([kernels.options] profile = true, profile_file)
// runs the eager decode steps again, and the per-op GPU time table is
// summed per decode step: what the GPU spends in each op against the
// forward's wall time (the rest is launch gaps and host work).
//
//   seatrt-step-profile MODEL_DIR --provider LIB --plugin-dir DIR
//       [--batches 1,16,32] [--prompt-len 64] [--steps 64] [--warmup 4]
//       [--kv auto|fp8|bf16] [--seconds 90] [--profile on|off]
//       [--prefill-profile P] [--prefill-time P] [--timeline 1,16,32]
//       [--kernel-options TOML] [--json FILE]
// --prefill-profile P: the profiled load first runs one prefill of P random
// tokens (batch 1, one step) and prints its per-op GPU time table.
// --prefill-time P: before the decode passes, times prefills of P random
// tokens (batch 1, eager, unprofiled, the plugin's streams as configured):
// one warm-up, then the median of three.  It answers "which environment
// prefills faster" in one call; the server benchmark gives the TTFT.
// --timeline B,...: for each B, decode steps launched from the model's plans
// (temperature 0.8, as the server runs them) with CUPTI recording every
// kernel's start and end (cupti_trace.hpp), cut into steps by host
// timestamps on CUPTI's clock: per step the span, the time no kernel runs,
// and per kernel what it adds to its stream's end (kernel_timeline.hpp) --
// where a graph step's time goes, which the eager per-op table cannot say.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cupti_trace.hpp"
#include "engine/abi_model_runner.hpp"
#include "engine/batch_builder.hpp"
#include "engine/kv_manager.hpp"
#include "kernel_timeline.hpp"
#include "seatrt/host/status.hpp"
#include "seatrt/model/model_session.hpp"

namespace {

namespace fs = std::filesystem;
namespace eng = seatrt::engine;
using Clock = std::chrono::steady_clock;

struct Options {
  fs::path model_dir, provider, plugin_dir, json_out;
  std::vector<int32_t> batches{1, 16, 32};
  int32_t prompt_len = 64;
  int32_t steps = 64;
  int32_t warmup = 4;
  std::string kv = "auto";
  double seconds = 90;
  bool profile = true;
  int32_t prefill_profile = 0;  // > 0: also profile one prefill of this many tokens
  int32_t prefill_time = 0;     // > 0: also time prefills of this many tokens (unprofiled)
  std::vector<int32_t> timeline;  // batch sizes to trace from graphs (--timeline)
  std::string kernel_options;   // TOML text for the provider's create_context
};

std::vector<int32_t> parse_list(const std::string& s) {
  std::vector<int32_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    const int v = std::stoi(item);
    if (v < 1 || v > 1024) throw std::runtime_error("--batches: " + item + " is not in 1..1024");
    out.push_back(v);
  }
  if (out.empty()) throw std::runtime_error("--batches is empty");
  return out;
}

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
    else if (a == "--batches") o.batches = parse_list(value());
    else if (a == "--prompt-len") o.prompt_len = std::stoi(value());
    else if (a == "--steps") o.steps = std::stoi(value());
    else if (a == "--warmup") o.warmup = std::stoi(value());
    else if (a == "--kv") o.kv = value();
    else if (a == "--seconds") o.seconds = std::stod(value());
    else if (a == "--json") o.json_out = value();
    else if (a == "--prefill-profile") o.prefill_profile = std::stoi(value());
    else if (a == "--prefill-time") o.prefill_time = std::stoi(value());
    else if (a == "--kernel-options") o.kernel_options = value();
    else if (a == "--timeline") {
      const std::string v = value();
      if (!v.empty() && v != "0") o.timeline = parse_list(v);
    }
    else if (a == "--profile") {
      const std::string v = value();
      if (v != "on" && v != "off") throw std::runtime_error("--profile: '" + v + "' is not on or off");
      o.profile = v == "on";
    }
    else if (!a.empty() && a[0] == '-') throw std::runtime_error("unknown option " + a);
    else o.model_dir = a;
  }
  if (o.model_dir.empty() || o.provider.empty() || o.plugin_dir.empty())
    throw std::runtime_error("usage: seatrt-step-profile MODEL_DIR --provider LIB --plugin-dir DIR [--batches 1,16,32] "
                             "[--prompt-len P] [--steps N] [--warmup W] [--kv auto|fp8|bf16] [--seconds S] "
                             "[--profile on|off] [--prefill-profile P] [--prefill-time P] [--timeline B,...] "
                             "[--kernel-options TOML] [--json FILE]");
  if (o.prompt_len < 2 || o.steps < 1 || o.warmup < 0 || !(o.seconds > 0))
    throw std::runtime_error("--prompt-len must be >= 2, --steps >= 1, --warmup >= 0, --seconds > 0");
  if (o.prefill_profile < 0) throw std::runtime_error("--prefill-profile must be >= 0");
  if (o.prefill_time < 0 || o.prefill_time == 1) throw std::runtime_error("--prefill-time must be 0 or >= 2");
  if (o.kv != "auto") eng::parse_kv_dtype(o.kv);  // throws naming the value
  return o;
}

// The plugins, a kernel context and the model: what model::ModelSession
// holds, with the provider's options passed on.  With `profile_file`, the
// context has the CUDA provider's per-op timer on (dumping there at
// destroy); for another provider nothing is loaded (model stays NULL).
struct Session {
  seatrt::host::SeatPlugins plugins;
  seatrt_kernel_context* context = nullptr;
  std::unique_ptr<seatrt::model::ModelLoader> loader;
  std::unique_ptr<seatrt::model::LoadedModel> model;

  Session(const Options& o, int64_t max_batch_tokens, const fs::path* profile_file = nullptr) {
    const auto lib = fs::weakly_canonical(fs::absolute(o.provider));
    seatrt::host::SeatConfig seat;
    seat.plugins.search_paths = {fs::weakly_canonical(fs::absolute(o.plugin_dir))};
    if (seat.plugins.search_paths.front() != lib.parent_path()) seat.plugins.search_paths.push_back(lib.parent_path());
    seat.kernels.provider = lib.string();
    plugins = seatrt::host::load_seat_plugins(seat);
    std::string options = o.kernel_options.empty() ? "" : o.kernel_options + "\n";
    if (profile_file) {
      if (!cuda()) return;
      // One stream: a second stream's ops would be numbered among the
      // passes' streams and their times would overlap the main stream's.
      options += "profile = true\nstreams = 1\nprofile_file = " + nlohmann::json(profile_file->string()).dump() + "\n";
    }
    context = plugins.dispatch->create_context(options, 0);
    loader = std::make_unique<seatrt::model::ModelLoader>(seatrt::host::host_api(),
                                                          seatrt::model::model_plugin_candidates(seat, plugins));
    model = loader->load(loader->prepare(o.model_dir), plugins.dispatch->table(), context, max_batch_tokens);
  }
  ~Session() {
    model.reset();
    if (context) plugins.dispatch->destroy_context(context);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool cuda() const { return plugins.dispatch->table()->device_kind == SEATRT_DEVICE_CUDA; }
};

struct PhaseTimes {
  std::vector<double> host, forward, sample, total;  // ms per timed step
};

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double mean(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// One pass: B sequences prefilled together, then warmup + steps decode steps.
// Returns the timings of the timed steps (fewer when the deadline passes).
class Pass {
 public:
  Pass(const seatrt::model::LoadedModel& m, const Options& o, int32_t batch, bool graphs, float temperature)
      : m_(m), o_(o), batch_(batch) {
    const seatrt_model_info& info = m.info();
    eng::KvPlanInput in;
    for (int32_t l = 0; l < info.num_layers; ++l) {
      const auto& s = info.kv_layers[l];
      in.layers.push_back({s.kv_heads, s.head_dim, s.window, s.single_tensor != 0});
    }
    const bool cuda = m.kernels()->device_kind == SEATRT_DEVICE_CUDA;
    in.dtype = eng::parse_kv_dtype(o.kv == "auto" ? (cuda ? "fp8" : "bf16") : o.kv);
    in.block_size = 16;
    // Whole blocks per sequence (each holds its own partial last block).
    in.max_model_len = (o.prompt_len + o.warmup + o.steps + 2 + in.block_size - 1) / in.block_size * in.block_size;
    in.max_num_seqs = batch;
    in.max_num_batched_tokens = static_cast<int64_t>(batch) * o.prompt_len;
    plan_ = eng::plan_kv_pool(in, eng::kv_bytes_for_context_multiple(in, batch + 1.0));
    kv_ = std::make_unique<eng::KvManager>(plan_, /*prefix_caching=*/false);
    eng::AbiModel abi;
    abi.host = m.host();
    abi.arch = &m.arch();
    abi.model = m.model();
    abi.kernels = m.kernels();
    abi.context = m.kernel_context();
    abi.vocab_size = info.vocab_size;
    abi.layers = in.layers;
    runner_ = std::make_unique<eng::AbiModelRunner>(abi, plan_, in.max_num_batched_tokens, batch, in.max_model_len, graphs);
    params_.temperature = temperature;
    params_.seed = 1234;
  }
  ~Pass() {
    for (auto& s : seqs_) kv_->free(*s);
  }
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;

  std::string kv_name() const { return eng::kv_dtype_name(plan_.dtype); }
  // Decode steps run as repeating shapes (launched from the model's plans).
  int64_t graph_replays() const { return runner_->repeating_steps(); }
  bool host_sampled() const { return host_sampled_; }
  // The prompt step's host-clock time (forward + sample, synchronous), ms;
  // 0 when the prompts were fed a token per step.
  double prefill_ms() const { return prefill_ms_; }
  // From now on each timed step appends its window (before the forward,
  // after the sample) on `clock` to *windows (--timeline).
  void record_windows(const seatrt::bench::CuptiTrace* clock, std::vector<seatrt::bench::StepWindow>* windows) {
    clock_ = clock;
    windows_ = windows;
  }

  // prompt_by_token: the prompts are fed one token per step (B rows each),
  // so every step of the pass is decode-shaped (the profile pass: each op
  // call on this runner's stream then belongs to a decode step at batch B).
  // *forwards = forward calls made, *decode_steps_done = steps after the prompt.
  PhaseTimes run(Clock::time_point deadline, int32_t* decode_steps_done, bool prompt_by_token = false,
                 int32_t* forwards = nullptr) {
    std::mt19937 rng(std::random_device{}());
    std::uniform_int_distribution<int32_t> pick(3, m_.info().vocab_size - 1);
    for (int32_t s = 0; s < batch_; ++s) {
      auto seq = std::make_shared<eng::Sequence>();
      seq->id = s;
      for (int32_t i = 0; i < o_.prompt_len; ++i) seq->tokens.push_back(pick(rng));
      seq->prompt_len = o_.prompt_len;
      seqs_.push_back(seq);
    }
    PhaseTimes t;
    int32_t calls = 0;
    if (prompt_by_token) {
      for (int32_t i = 0; i < o_.prompt_len; ++i, ++calls) step(1, nullptr);
    } else {
      const auto t_prefill = Clock::now();
      step(o_.prompt_len, nullptr);  // prefill: every prompt in one step
      prefill_ms_ = ms_since(t_prefill);
      ++calls;
    }
    *decode_steps_done = 0;
    for (int32_t i = 0; i < o_.warmup + o_.steps && Clock::now() < deadline; ++i, ++calls) {
      step(1, i >= o_.warmup ? &t : nullptr);
      ++*decode_steps_done;
    }
    if (forwards) *forwards = calls;
    return t;
  }

 private:
  void step(int64_t n, PhaseTimes* t) {
    const auto t0 = Clock::now();
    eng::StepPlan plan;
    for (auto& seq : seqs_) {
      const int64_t count = seq->num_computed == 0 ? n : 1;  // n > 1: the prefill
      if (!kv_->allocate(*seq, count))
        throw std::runtime_error("KV pool short for sequence " + std::to_string(seq->id) + " at " +
                                 std::to_string(seq->num_computed) + " tokens (" + eng::describe(plan_) + ")");
      plan.chunks.push_back({seq, seq->num_computed, count, true});
      plan.num_tokens += count;
    }
    const eng::StepBatch batch = eng::build_step_batch(plan, plan_.block_size, plan_.full.has_value(), plan_.windowed.has_value());
    const double host_a = ms_since(t0);
    const uint64_t window_begin = t && windows_ ? clock_->now() : 0;
    const auto t1 = Clock::now();
    runner_->forward(batch, logits_);
    const double fwd = ms_since(t1);
    const auto t2 = Clock::now();
    std::vector<eng::SampleInput> rows(seqs_.size());
    for (size_t i = 0; i < seqs_.size(); ++i) {
      const eng::Sequence& seq = *seqs_[i];
      rows[i].params = &params_;
      rows[i].step = static_cast<uint64_t>(seq.generated());
      rows[i].prompt_tokens = std::span<const int32_t>(seq.tokens.data(), static_cast<size_t>(seq.prompt_len));
      rows[i].output_tokens = std::span<const int32_t>(seq.tokens.data() + seq.prompt_len, static_cast<size_t>(seq.generated()));
      if (!logits_.empty()) {
        const auto v = static_cast<size_t>(runner_->vocab_size());
        rows[i].logits = std::span<const float>(logits_.data() + i * v, v);
      }
    }
    if (!runner_->sample(rows, results_)) {
      host_sampled_ = true;
      results_.clear();
      for (const auto& r : rows) results_.push_back(eng::sample_on_host(r));
    }
    const double smp = ms_since(t2);
    if (t && windows_) windows_->push_back({window_begin, clock_->now()});
    const auto t3 = Clock::now();
    for (size_t i = 0; i < seqs_.size(); ++i) {
      if (results_[i].non_finite) throw std::runtime_error("non-finite logits in a decode step");
      eng::Sequence& seq = *seqs_[i];
      seq.num_computed += plan.chunks[i].count;
      kv_->commit(seq);
      // A token is drawn only once the whole prompt is in the cache.
      if (seq.num_computed == static_cast<int64_t>(seq.tokens.size())) seq.tokens.push_back(results_[i].event.token);
    }
    const double host_b = ms_since(t3);
    if (!t) return;
    t->host.push_back(host_a + host_b);
    t->forward.push_back(fwd);
    t->sample.push_back(smp);
    t->total.push_back(host_a + fwd + smp + host_b);
  }

  const seatrt::model::LoadedModel& m_;
  const Options& o_;
  int32_t batch_;
  eng::KvPlan plan_;
  std::unique_ptr<eng::KvManager> kv_;
  std::unique_ptr<eng::AbiModelRunner> runner_;
  eng::SamplingParams params_;
  std::vector<eng::SequencePtr> seqs_;
  std::vector<float> logits_;
  std::vector<eng::SampleResult> results_;
  bool host_sampled_ = false;
  double prefill_ms_ = 0;
  const seatrt::bench::CuptiTrace* clock_ = nullptr;
  std::vector<seatrt::bench::StepWindow>* windows_ = nullptr;
};

int64_t max_batch_tokens(const Options& o) {
  int32_t b = *std::max_element(o.batches.begin(), o.batches.end());
  if (!o.timeline.empty()) b = std::max(b, *std::max_element(o.timeline.begin(), o.timeline.end()));
  return std::max<int64_t>({static_cast<int64_t>(b) * o.prompt_len, o.prefill_profile, o.prefill_time});
}

// --prefill-time: prefills of P random tokens at batch 1, eager, as the
// server runs them (the plugin's streams as configured, no profiler); the
// first one grows the provider's scratch and is not counted.
void time_prefill(const seatrt::model::LoadedModel& model, const Options& o, Clock::time_point deadline,
                  nlohmann::json& report) {
  Options po = o;
  po.prompt_len = o.prefill_time;
  po.warmup = 0;
  po.steps = 1;
  std::vector<double> ms;
  for (int rep = 0; rep < 4 && Clock::now() < deadline; ++rep) {
    Pass pass(model, po, 1, /*graphs=*/false, 0.8f);
    int32_t done = 0;
    pass.run(deadline, &done);
    if (rep > 0) ms.push_back(pass.prefill_ms());
  }
  if (ms.empty()) {
    std::printf("prefill of %d tokens: not timed (--seconds reached)\n", o.prefill_time);
    return;
  }
  const double med = median(ms);
  std::printf("prefill of %d tokens, eager, unprofiled: median %.1f ms = %.0f tok/s over %zu runs after a warm-up\n",
              o.prefill_time, med, 1000.0 * o.prefill_time / med, ms.size());
  report["prefill_time"] = {{"tokens", o.prefill_time}, {"median_ms", med}, {"runs_ms", ms}};
}

// --timeline: decode steps of B sequences from the graphs (t=0.8), every
// kernel traced by CUPTI; prints the median step's span and idle time and
// the kernels by what they add to their stream's end.
void timeline_pass(const seatrt::model::LoadedModel& model, const Options& o, int32_t b,
                   seatrt::bench::CuptiTrace& trace, Clock::time_point deadline, nlohmann::json& report) {
  std::vector<seatrt::bench::StepWindow> windows;
  uint64_t dropped = 0;
  std::vector<seatrt::bench::KernelRecord> records;
  int32_t replays = 0;
  {
    // Tracing on before the pass plans its steps (see cupti_trace.hpp).
    trace.start();
    Pass pass(model, o, b, /*graphs=*/true, 0.8f);
    pass.record_windows(&trace, &windows);
    int32_t done = 0;
    try {
      pass.run(deadline, &done);
    } catch (...) {
      trace.stop(&dropped);
      throw;
    }
    records = trace.stop(&dropped);
    replays = static_cast<int32_t>(pass.graph_replays());
  }
  const auto r = seatrt::bench::analyze_timeline(std::move(records), windows);
  if (r.steps.empty()) {
    std::printf("\ntimeline B=%d: no kernel records in the %zu step windows (%llu dropped)\n", b, windows.size(),
                static_cast<unsigned long long>(dropped));
    return;
  }
  const auto& m = r.steps[static_cast<size_t>(r.median_step)];
  // The same step untraced (the timed passes above), to show what tracing costs.
  std::string untraced = "not timed";
  for (const auto& pass : report["passes"])
    if (pass["batch"] == b && pass["mode"] == "graphs" && pass["sampler"] == "t=0.8") {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%.1f us (forward + sample medians)",
                    1000.0 * (pass["median_forward_ms"].get<double>() + pass["median_sample_ms"].get<double>()));
      untraced = buf;
    }
  std::vector<double> spans, idles;
  for (const auto& s : r.steps) spans.push_back(s.span_us), idles.push_back(s.idle_us);
  std::printf("\ntimeline B=%d (graphs, t=0.8, %zu traced steps, %d graph replays, CUPTI; %llu records dropped):\n"
              "  median step: span %.1f us, %d kernels on %d streams, busy %.1f us, idle (no kernel running) %.1f us, "
              "sum of kernel durations %.1f us; over the steps: span median %.1f, idle median %.1f us; the step "
              "untraced: %s\n",
              b, r.steps.size(), replays, static_cast<unsigned long long>(dropped), m.span_us, m.kernels, m.streams,
              m.busy_us, m.idle_us, m.duration_sum_us, median(spans), median(idles), untraced.c_str());
  std::printf("  %-60s %7s %9s %10s %6s %9s\n", "kernel", "calls", "mean us", "adds us", "share", "gap us");
  nlohmann::json rows = nlohmann::json::array();
  double adds_total = 0;
  for (const auto& k : r.by_name) adds_total += k.adds_us_per_step;
  for (const auto& k : r.by_name) {
    std::printf("  %-60.60s %7.2f %9.2f %10.2f %5.1f%% %9.2f\n", k.name.c_str(), k.calls_per_step, k.mean_duration_us,
                k.adds_us_per_step, 100.0 * k.adds_us_per_step / adds_total, k.mean_gap_us);
    rows.push_back({{"kernel", k.name}, {"calls_per_step", k.calls_per_step}, {"mean_us", k.mean_duration_us},
                    {"adds_us_per_step", k.adds_us_per_step}, {"mean_gap_us", k.mean_gap_us}});
  }
  std::printf("  (adds: the kernel's end minus the previous end on its stream, per step; gap: its start minus that "
              "end, < 0 when it started early under PDL; adds summed over all streams exceed the span where two "
              "streams overlap)\n");
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : r.median_kernels)
    kernels.push_back({{"kernel", k.name}, {"stream", k.stream}, {"start_us", static_cast<double>(k.start_ns) / 1000.0},
                       {"end_us", static_cast<double>(k.end_ns) / 1000.0}});
  report["timeline"][std::to_string(b)] = {{"steps", r.steps.size()}, {"span_us", spans}, {"idle_us", idles},
                                          {"median_step", {{"span_us", m.span_us}, {"busy_us", m.busy_us},
                                                           {"idle_us", m.idle_us}, {"kernels", kernels}}},
                                          {"by_kernel", rows}, {"dropped", dropped}};
}

void timelines(const seatrt::model::LoadedModel& model, const Options& o, Clock::time_point deadline,
               nlohmann::json& report) {
  const auto skip = [&](const std::string& why) {
    std::printf("\n--timeline skipped: %s\n", why.c_str());
    report["timeline_skipped"] = why;
  };
  if (model.kernels()->device_kind != SEATRT_DEVICE_CUDA) return skip("the provider's kernels are not CUDA kernels");
  std::string why;
  auto trace = seatrt::bench::CuptiTrace::open(&why);
  if (!trace) return skip(why);
  for (int32_t b : o.timeline) {
    if (Clock::now() >= deadline) {
      std::printf("(--seconds reached: remaining timelines skipped)\n");
      return;
    }
    try {
      timeline_pass(model, o, b, *trace, deadline, report);
    } catch (const std::exception& e) {
      // A CUPTI call that fails (no driver, a profiler already attached)
      // ends the timelines, not the run.
      return skip(std::string("B=") + std::to_string(b) + ": " + e.what());
    }
    std::fflush(stdout);
  }
}

// Timed passes: every B, mode and sampler.  Returns the eager forward +
// sample medians per B (temperature 0.8), which the profile summary
// compares against.
std::map<int32_t, double> timed_passes(const Options& o, Clock::time_point deadline, nlohmann::json& report) {
  const auto t_load = Clock::now();
  Session session(o, max_batch_tokens(o));
  const auto& info = session.model->info();
  std::printf("loaded %s in %.1f s: %d layers, hidden %d, vocab %d; provider %s\n", o.model_dir.string().c_str(),
              ms_since(t_load) / 1000, info.num_layers, info.hidden_size, info.vocab_size, o.provider.string().c_str());
  if (o.prefill_time > 0) time_prefill(*session.model, o, deadline, report);
  std::printf("decode step phases, host clock, median ms over the timed steps (prompt %d tokens, %d warmup + %d timed "
              "steps per pass):\n", o.prompt_len, o.warmup, o.steps);
  std::printf("%5s %-7s %-8s %4s %6s %9s %9s %9s %9s %10s %8s  %s\n", "B", "mode", "sampler", "kv", "steps", "total",
              "forward", "sample", "host", "mean total", "tok/s", "notes");
  std::map<int32_t, double> eager_forward;
  // The timelines get a sixth of the time left (they come after the
  // passes, which can use the rest).
  const auto passes_deadline =
      o.timeline.empty() ? deadline : Clock::now() + (deadline - Clock::now()) * 5 / 6;
  bool out_of_time = false;
  for (int32_t b : o.batches) {
    for (bool graphs : {false, true}) {
      for (float temperature : {0.8f, 0.0f}) {
        if (out_of_time || Clock::now() >= passes_deadline) {
          if (!out_of_time) std::printf("(--seconds reached: remaining passes skipped)\n");
          out_of_time = true;
          continue;
        }
        Pass pass(*session.model, o, b, graphs, temperature);
        int32_t done = 0;
        const PhaseTimes t = pass.run(passes_deadline, &done);
        const char* mode = graphs ? "graphs" : "eager";
        const char* sampler = temperature > 0 ? "t=0.8" : "greedy";
        std::string notes;
        if (graphs) notes = std::to_string(pass.graph_replays()) + " steps launched from plans";
        if (pass.host_sampled()) notes += (notes.empty() ? "" : "; ") + std::string("host sampler");
        const double total = median(t.total);
        std::printf("%5d %-7s %-8s %4s %6zu %9.3f %9.3f %9.3f %9.3f %10.3f %8.0f  %s\n", b, mode, sampler,
                    pass.kv_name().c_str(), t.total.size(), total, median(t.forward), median(t.sample), median(t.host),
                    mean(t.total), 1000.0 * b / total, notes.c_str());
        std::fflush(stdout);
        if (!graphs && temperature > 0 && !t.forward.empty()) eager_forward[b] = median(t.forward) + median(t.sample);
        report["passes"].push_back({{"batch", b}, {"mode", mode}, {"sampler", sampler}, {"kv", pass.kv_name()},
                                    {"timed_steps", t.total.size()}, {"median_total_ms", total},
                                    {"median_forward_ms", median(t.forward)}, {"median_sample_ms", median(t.sample)},
                                    {"median_host_ms", median(t.host)}, {"mean_total_ms", mean(t.total)},
                                    {"graph_replays", pass.graph_replays()}, {"notes", notes}});
      }
    }
  }
  if (!o.timeline.empty()) timelines(*session.model, o, deadline, report);
  return eager_forward;
}

struct ProfileRow {
  int32_t stream = 0;
  std::string op, variant;
  int64_t out = 0, in = 0, rows = 0, count = 0;
  double total_ms = 0, mean_us = 0;
};

std::vector<ProfileRow> read_profile(const fs::path& file) {
  std::ifstream f(file);
  if (!f) throw std::runtime_error("the provider wrote no profile table to " + file.string());
  std::vector<ProfileRow> out;
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    ProfileRow r;
    if (!(in >> r.stream >> r.op >> r.variant >> r.out >> r.in >> r.rows >> r.count >> r.total_ms >> r.mean_us))
      throw std::runtime_error(file.string() + ": unreadable line '" + line + "'");
    out.push_back(r);
  }
  return out;
}

// The profiled pass: eager, temperature 0.8, every step decode-shaped (the
// prompts fed a token per step), one runner (stream) per batch size, all
// kept alive until the table is written so no stream handle is reused.  The
// provider numbers streams in order of first use; the last ones are these
// passes' in order.  Per-op GPU time per step = total / forward calls.
void profile_pass(const Options& o, Clock::time_point deadline, const std::map<int32_t, double>& eager_forward,
                  nlohmann::json& report) {
  const fs::path file = fs::temp_directory_path() / ("seatrt-step-profile-" + std::to_string(::getpid()) + ".tsv");
  std::vector<std::pair<int32_t, int32_t>> passes;  // (B, forward calls), in stream order
  {
    Session session(o, max_batch_tokens(o), &file);
    if (!session.model) {
      std::printf("profile pass skipped: the provider is not the CUDA one (its per-op timer is a CUDA provider option)\n");
      return;
    }
    std::vector<std::unique_ptr<Pass>> alive;
    // The prefill pass (B recorded as 0): one step of P tokens, then one
    // decode step (a Pass always takes one); its table is per prefill.
    Options prefill_options = o;
    prefill_options.prompt_len = o.prefill_profile;
    prefill_options.warmup = 0;
    prefill_options.steps = 1;
    if (o.prefill_profile > 0) {
      alive.push_back(std::make_unique<Pass>(*session.model, prefill_options, 1, /*graphs=*/false, 0.8f));
      int32_t done = 0, forwards = 0;
      const auto t = Clock::now();
      alive.back()->run(Clock::time_point::max(), &done, /*prompt_by_token=*/false, &forwards);
      std::printf("\nprefill of %d tokens + 1 decode step, eager, profiled: %.1f ms wall\n", o.prefill_profile,
                  ms_since(t));
      passes.emplace_back(0, 1);
    }
    for (int32_t b : o.batches) {
      if (Clock::now() >= deadline) break;
      alive.push_back(std::make_unique<Pass>(*session.model, o, b, /*graphs=*/false, 0.8f));
      int32_t done = 0, forwards = 0;
      alive.back()->run(deadline, &done, /*prompt_by_token=*/true, &forwards);
      passes.emplace_back(b, forwards);
    }
    alive.clear();
  }  // the context's destroy writes the table
  const std::vector<ProfileRow> rows = read_profile(file);
  std::filesystem::remove(file);
  std::vector<int32_t> streams;
  for (const auto& r : rows)
    if (std::find(streams.begin(), streams.end(), r.stream) == streams.end()) streams.push_back(r.stream);
  std::sort(streams.begin(), streams.end());
  if (streams.size() < passes.size())
    throw std::runtime_error("the profile table has " + std::to_string(streams.size()) + " streams for " +
                             std::to_string(passes.size()) + " passes");
  for (size_t i = 0; i < passes.size(); ++i) {
    const auto [b, n] = passes[i];
    const int32_t stream = streams[streams.size() - passes.size() + i];
    std::vector<std::pair<double, const ProfileRow*>> per_step;
    double sum = 0;
    for (const auto& r : rows) {
      if (r.stream != stream) continue;
      const double ms = r.total_ms / n;
      per_step.emplace_back(ms, &r);
      sum += ms;
    }
    std::sort(per_step.begin(), per_step.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    const auto fwd = eager_forward.find(b);
    if (b == 0)
      std::printf("\nper-op GPU time of one prefill of %d tokens (eager; the rows of 1 are its one decode step): "
                  "%.3f ms in ops", o.prefill_profile, sum);
    else
      std::printf("\nper-op GPU time per decode step, B=%d (eager, t=0.8, %d profiled steps): %.3f ms in ops", b, n, sum);
    if (fwd != eager_forward.end())
      std::printf(" of %.3f ms eager forward + sample (unprofiled medians above): %.3f ms outside the ops (launch "
                  "gaps, uploads, syncs, host)", fwd->second, fwd->second - sum);
    std::printf("\n  (a GPU waiting on the host shows launch latency inside each op's time; rows = first axis of the "
                "op's main tensor)\n");
    std::printf("  %-14s %-8s %7s %7s %7s %7s %9s %9s %6s\n", "op", "variant", "out", "in", "rows", "calls", "mean us",
                "ms/step", "share");
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& [ms, r] : per_step) {
      const double calls = static_cast<double>(r->count) / n;
      std::printf("  %-14s %-8s %7lld %7lld %7lld %7.2f %9.2f %9.3f %5.1f%%\n", r->op.c_str(), r->variant.c_str(),
                  static_cast<long long>(r->out), static_cast<long long>(r->in), static_cast<long long>(r->rows), calls,
                  r->mean_us, ms, 100.0 * ms / sum);
      ops.push_back({{"op", r->op}, {"variant", r->variant}, {"out", r->out}, {"in", r->in}, {"rows", r->rows},
                     {"calls_per_step", calls}, {"mean_us", r->mean_us}, {"ms_per_step", ms}});
    }
    report["profile"][b == 0 ? "prefill" + std::to_string(o.prefill_profile) : std::to_string(b)] = {{"steps", n}, {"ops_ms_per_step", sum}, {"ops", ops}};
  }
}

int run(const Options& o) {
  // The timed passes get 60% of --seconds when a profile pass follows (it
  // loads the checkpoint again), all of it otherwise.
  const auto start = Clock::now();
  const auto after = [&](double fraction) {
    return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds * fraction));
  };
  const auto deadline = after(1.0);
  nlohmann::json report;
  const auto eager_forward = timed_passes(o, o.profile ? after(0.6) : deadline, report);
  if (o.profile) {
    if (Clock::now() < deadline) profile_pass(o, deadline, eager_forward, report);
    else std::printf("profile pass skipped: --seconds reached\n");
  }
  if (!o.json_out.empty()) std::ofstream(o.json_out) << report.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt-step-profile: error: %s\n", e.what());
    return 2;
  }
}
