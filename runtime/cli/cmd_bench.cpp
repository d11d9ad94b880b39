// `seatrt bench URL`: a load generator for a running seat.
//  - Decode sweep: for each concurrency level, `conc` streams each send
//    --requests-per-stream streaming completions of --gen-tokens tokens after
//    a prompt of --prompt-tokens tokens; reports tokens/s (aggregate over the
//    wall time, per stream, and per stream after the first token), time to
//    first token and inter-token latency (p50/p99).
//  - Prefill (--prefill 2048,8192,...): for each length, --prefill-requests
//    requests one after another, each an exact-length prompt of random ids
//    with max_tokens 1; reports prompt tokens / TTFT and the TTFT itself.
// Every prompt is unique (OS-random nonce or ids), so the prefix cache is
// not what gets measured.  --temperature (default 0.8; 0 = greedy) is sent
// with every request.  --json FILE writes every figure for scripts.
// Against a seatrt seat each decode level also reports the engine's steps
// from /metrics: tokens per step and the host work per step beside the
// model's (what a device waits through between its steps).
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_requests.hpp"
#include "command.hpp"
#include "server/http_client.hpp"

namespace seatrt::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using bench::RequestResult;
using bench::percentile;

struct BenchOptions {
  std::string url;
  std::string model;
  std::vector<int> concurrency{1, 4, 16};
  int prompt_tokens = 256;
  int gen_tokens = 128;
  int requests_per_stream = 2;
  bool id_prompts = false;
  std::vector<int> prefill;
  int prefill_requests = 2;
  double temperature = 0.8;
  std::string json_path;
};

int parse_int(const std::string& flag, const std::string& v) {
  int x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || x <= 0)
    throw std::invalid_argument(flag + ": '" + v + "' is not a positive integer");
  return x;
}

double parse_temperature(const std::string& v) {
  char* end = nullptr;
  const double t = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(t >= 0.0 && t <= 2.0))
    throw std::invalid_argument("--temperature: '" + v + "' is not a number in [0, 2]");
  return t;
}

// "1,4,16" -> {1, 4, 16}; "none" -> {}.
std::vector<int> parse_list(const std::string& flag, const std::string& list) {
  std::vector<int> out;
  if (list == "none") return out;
  for (size_t p = 0; p <= list.size();) {
    const size_t comma = std::min(list.find(',', p), list.size());
    out.push_back(parse_int(flag, list.substr(p, comma - p)));
    p = comma + 1;
  }
  return out;
}

BenchOptions parse_options(std::span<const std::string> args) {
  BenchOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    if (a == "--model") o.model = value();
    else if (a == "--concurrency") o.concurrency = parse_list(a, value());
    else if (a == "--prompt-tokens") o.prompt_tokens = parse_int(a, value());
    else if (a == "--gen-tokens") o.gen_tokens = parse_int(a, value());
    else if (a == "--requests-per-stream") o.requests_per_stream = parse_int(a, value());
    else if (a == "--id-prompts") o.id_prompts = true;
    else if (a == "--prefill") o.prefill = parse_list(a, value());
    else if (a == "--prefill-requests") o.prefill_requests = parse_int(a, value());
    else if (a == "--json") o.json_path = value();
    else if (a == "--temperature") o.temperature = parse_temperature(value());
    else if (o.url.empty() && a.rfind("--", 0) != 0) o.url = a;
    else throw std::invalid_argument("unexpected argument " + a);
  }
  if (o.url.empty()) throw std::invalid_argument("URL is required");
  return o;
}

// The engine's step counters of a seatrt seat's /metrics; nullopt from a
// server without them.
struct EngineCounters {
  double steps = 0, step_s = 0, model_s = 0;
};
std::optional<EngineCounters> engine_counters(const server::HttpClient& client) {
  std::string text;
  try {
    text = client.get("/metrics").body;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  EngineCounters c;
  int found = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    const auto space = line.find(' ');
    if (space == std::string::npos || line[0] == '#') continue;
    const std::string name = line.substr(0, space);
    double* into = name == "seatrt_engine_steps_total"          ? &c.steps
                   : name == "seatrt_engine_step_seconds_total"  ? &c.step_s
                   : name == "seatrt_engine_model_seconds_total" ? &c.model_s
                                                                 : nullptr;
    if (!into) continue;
    *into = std::strtod(line.c_str() + space + 1, nullptr);
    ++found;
  }
  if (found != 3) return std::nullopt;
  return c;
}

// One concurrency level of the decode sweep.
json run_level(const server::HttpClient& client, const BenchOptions& o, const std::vector<int32_t>& pool, int conc) {
  const int n = conc * o.requests_per_stream;
  std::vector<json> prompts;
  for (int i = 0; i < n; ++i)
    prompts.push_back(o.id_prompts ? bench::random_id_prompt(pool, o.prompt_tokens)
                                   : json(bench::unique_text_prompt(client, o.model, o.prompt_tokens)));
  std::vector<RequestResult> results(static_cast<size_t>(n));
  std::atomic<int> next{0};
  const auto counters_before = engine_counters(client);
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < conc; ++w)
    workers.emplace_back([&] {
      for (int i; (i = next++) < n;)
        results[static_cast<size_t>(i)] = bench::run_completion(client, o.model, prompts[static_cast<size_t>(i)], o.gen_tokens,
                                                               o.temperature);
    });
  for (auto& t : workers) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const auto counters_after = engine_counters(client);
  std::vector<double> ttft, itl, per_stream, decode_stream;
  int64_t tokens = 0;
  int failed = 0;
  std::string first_error;
  for (const auto& r : results) {
    if (!r.ok) {
      ++failed;
      if (first_error.empty()) first_error = r.error;
      continue;
    }
    tokens += r.tokens;
    ttft.push_back(r.ttft);
    itl.insert(itl.end(), r.itl.begin(), r.itl.end());
    if (r.duration > 0) per_stream.push_back(static_cast<double>(r.tokens) / r.duration);
    if (r.tokens > 1 && r.duration > r.ttft)
      decode_stream.push_back(static_cast<double>(r.tokens - 1) / (r.duration - r.ttft));
  }
  const auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  json j = {{"concurrency", conc},
            {"requests", n},
            {"failed", failed},
            {"completion_tokens", tokens},
            {"wall_s", wall},
            {"tok_s_total", static_cast<double>(tokens) / wall},
            {"tok_s_stream", mean(per_stream)},
            {"decode_tok_s_stream", mean(decode_stream)},
            {"ttft_p50_ms", 1e3 * percentile(ttft, 0.5)},
            {"ttft_p99_ms", 1e3 * percentile(ttft, 0.99)},
            {"itl_p50_ms", 1e3 * percentile(itl, 0.5)},
            {"itl_p99_ms", 1e3 * percentile(itl, 0.99)}};
  if (!first_error.empty()) j["first_error"] = first_error;
  if (counters_before && counters_after && counters_after->steps > counters_before->steps) {
    const double steps = counters_after->steps - counters_before->steps;
    const double model_s = counters_after->model_s - counters_before->model_s;
    const double host_s = counters_after->step_s - counters_before->step_s - model_s;
    j["engine_steps"] = steps;  // prefill steps included: every step of the level
    j["engine_tokens_per_step"] = static_cast<double>(tokens) / steps;
    j["engine_host_us_per_step"] = 1e6 * host_s / steps;
    j["engine_model_us_per_step"] = 1e6 * model_s / steps;
  }
  return j;
}

// Prefill of one prompt length: requests one after another, medians.
json run_prefill(const server::HttpClient& client, const BenchOptions& o, const std::vector<int32_t>& pool, int length) {
  std::vector<double> ttft, rate;
  int failed = 0;
  std::string first_error;
  int64_t prompt_tokens = 0;
  for (int i = 0; i < o.prefill_requests; ++i) {
    const RequestResult r = bench::run_completion(client, o.model, bench::random_id_prompt(pool, length), 1, o.temperature);
    if (!r.ok || r.ttft <= 0) {
      ++failed;
      if (first_error.empty()) first_error = r.error;
      continue;
    }
    prompt_tokens = r.prompt_tokens > 0 ? r.prompt_tokens : length;
    ttft.push_back(r.ttft);
    rate.push_back(static_cast<double>(prompt_tokens) / r.ttft);
  }
  json j = {{"prompt_tokens", length},       {"requests", o.prefill_requests},
            {"failed", failed},              {"ttft_p50_ms", 1e3 * percentile(ttft, 0.5)},
            {"ttft_max_ms", 1e3 * percentile(ttft, 1.0)}, {"prefill_tok_s", percentile(rate, 0.5)}};
  if (prompt_tokens > 0) j["usage_prompt_tokens"] = prompt_tokens;
  if (!first_error.empty()) j["first_error"] = first_error;
  return j;
}

int run_bench(std::span<const std::string> args) {
  BenchOptions o;
  try {
    o = parse_options(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "seatrt bench: %s\nusage: seatrt bench URL [--model NAME] [--concurrency 1,4,16|none] "
                 "[--prompt-tokens N] [--gen-tokens N] [--requests-per-stream N] [--id-prompts] "
                 "[--prefill 2048,8192] [--prefill-requests N] [--temperature T] [--json FILE]\n",
                 e.what());
    return 2;
  }
  try {
    const char* key = std::getenv("SEATRT_API_KEY");
    if (!key) key = std::getenv("OPENAI_API_KEY");
    const server::HttpClient client(o.url, key ? key : "");
    if (o.model.empty()) {
      const json models = json::parse(client.get("/v1/models").body, nullptr, false);
      if (!models.contains("data") || !models["data"].is_array() || models["data"].empty()) {
        std::fprintf(stderr, "seatrt bench: cannot list models at %s\n", o.url.c_str());
        return 1;
      }
      o.model = models["data"][0].value("id", "");
    }
    const bool need_pool = o.id_prompts || !o.prefill.empty();
    const std::vector<int32_t> pool = need_pool ? bench::token_pool(client, o.model) : std::vector<int32_t>();
    json report = {{"url", o.url}, {"model", o.model}, {"prompt_tokens", o.prompt_tokens},
                   {"gen_tokens", o.gen_tokens}, {"temperature", o.temperature}, {"decode", json::array()}, {"prefill", json::array()}};
    // Written after every level, so a run stopped by its time limit keeps
    // what it measured.
    const auto save = [&] {
      if (o.json_path.empty()) return;
      std::ofstream f(o.json_path);
      f << report.dump(1) << "\n";
      if (!f) std::fprintf(stderr, "seatrt bench: cannot write %s\n", o.json_path.c_str());
    };
    int total_failed = 0;
    if (!o.concurrency.empty()) {
      std::printf("seatrt bench %s model=%s prompt %s%d tokens, gen=%d tokens, temperature %g\n", o.url.c_str(),
                  o.model.c_str(), o.id_prompts ? "" : "~", o.prompt_tokens, o.gen_tokens, o.temperature);
      std::printf("%6s %8s %6s %12s %12s %12s %10s %10s %10s %10s\n", "conc", "requests", "failed", "tok/s total",
                  "tok/s stream", "decode/strm", "ttft p50", "ttft p99", "itl p50", "itl p99");
    }
    for (int conc : o.concurrency) {
      const json j = run_level(client, o, pool, conc);
      std::printf("%6d %8d %6d %12.1f %12.1f %12.1f %9.1fms %9.1fms %9.1fms %9.1fms\n", conc, j["requests"].get<int>(),
                  j["failed"].get<int>(), j["tok_s_total"].get<double>(), j["tok_s_stream"].get<double>(),
                  j["decode_tok_s_stream"].get<double>(), j["ttft_p50_ms"].get<double>(), j["ttft_p99_ms"].get<double>(),
                  j["itl_p50_ms"].get<double>(), j["itl_p99_ms"].get<double>());
      if (j.contains("first_error")) std::printf("       first failure: %s\n", j["first_error"].get<std::string>().c_str());
      if (j.contains("engine_steps"))
        std::printf("       engine: %.0f steps, %.1f tokens/step, host %.1f us/step beside the model's %.1f us/step\n",
                    j["engine_steps"].get<double>(), j["engine_tokens_per_step"].get<double>(),
                    j["engine_host_us_per_step"].get<double>(), j["engine_model_us_per_step"].get<double>());
      std::fflush(stdout);
      total_failed += j["failed"].get<int>();
      report["decode"].push_back(j);
      save();
    }
    if (!o.prefill.empty())
      std::printf("%10s %8s %6s %12s %12s %12s\n", "prompt", "requests", "failed", "prefill t/s", "ttft p50", "ttft max");
    for (int length : o.prefill) {
      const json j = run_prefill(client, o, pool, length);
      std::printf("%10d %8d %6d %12.1f %10.1fms %10.1fms\n", length, j["requests"].get<int>(), j["failed"].get<int>(),
                  j["prefill_tok_s"].get<double>(), j["ttft_p50_ms"].get<double>(), j["ttft_max_ms"].get<double>());
      if (j.contains("first_error")) std::printf("       first failure: %s\n", j["first_error"].get<std::string>().c_str());
      std::fflush(stdout);
      total_failed += j["failed"].get<int>();
      report["prefill"].push_back(j);
      save();
    }
    return total_failed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seatrt bench: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("bench",
                   "bench URL [--model NAME] [--concurrency 1,4,16|none] [--prompt-tokens N] [--gen-tokens N] "
                   "[--requests-per-stream N] [--id-prompts] [--prefill 2048,8192] [--prefill-requests N] [--temperature T] "
                   "[--json FILE]",
                   "load-test a running seat: decode tokens/s, TTFT and inter-token latency; prefill tokens/s",
                   seatrt::cli::run_bench)
