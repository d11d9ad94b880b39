// `seatrt bench URL`: a load generator.  For each concurrency level it runs
// streaming completions with prompts of about --prompt-tokens tokens made
// unique by a nonce from the OS random source (so the prefix cache is not
// what gets measured), and reports tokens/s (aggregate and per stream),
// time to first token and inter-token latency (p50/p99).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "server/http_client.hpp"

namespace seatrt::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct BenchOptions {
  std::string url;
  std::string model;
  std::vector<int> concurrency{1, 4, 16};
  int prompt_tokens = 256;
  int gen_tokens = 128;
  int requests_per_stream = 2;
};

struct RequestResult {
  bool ok = false;
  std::string error;
  double ttft = 0;
  std::vector<double> itl;
  int64_t tokens = 0;
  double duration = 0;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto idx = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

int parse_int(const std::string& flag, const std::string& v) {
  int x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || x <= 0)
    throw std::invalid_argument(flag + ": '" + v + "' is not a positive integer");
  return x;
}

// A prompt of about `tokens` tokens that starts with a fresh OS-random nonce.
std::string unique_prompt(const server::HttpClient& client, const std::string& model, int tokens) {
  std::random_device os_random;
  char nonce[40];
  std::snprintf(nonce, sizeof nonce, "%08x%08x%08x", os_random(), os_random(), os_random());
  static const char* words[] = {"the", "river", "carried", "light", "across", "quiet", "stones", "and", "morning",
                                "birds", "answered", "with", "songs", "older", "than", "the", "town"};
  std::string text = std::string("Request ") + nonce + ". Continue this story:";
  int estimate = 0;
  for (size_t i = 0; estimate < tokens; ++i, ++estimate) text += std::string(" ") + words[i % 17];
  // Trim with the server's tokenizer so the length is what was asked.
  const auto r = client.post("/tokenize", json{{"model", model}, {"prompt", text}}.dump());
  const json j = json::parse(r.body, nullptr, false);
  if (r.status == 200 && j.contains("count")) {
    while (j["count"].get<int>() > tokens && estimate > 0) {  // words are ~1 token each
      text.resize(text.rfind(' '));
      --estimate;
      const auto r2 = client.post("/tokenize", json{{"model", model}, {"prompt", text}}.dump());
      const json j2 = json::parse(r2.body, nullptr, false);
      if (!j2.contains("count") || j2["count"].get<int>() <= tokens) break;
    }
  }
  return text;
}

RequestResult run_one(const server::HttpClient& client, const BenchOptions& o, const std::string& prompt) {
  RequestResult res;
  json body = {{"model", o.model}, {"prompt", prompt}, {"max_tokens", o.gen_tokens}, {"temperature", 0.8},
               {"stream", true}, {"stream_options", {{"include_usage", true}}}};
  const auto start = Clock::now();
  auto last = start;
  bool first = true;
  std::string error;
  const int status = client.post_events("/v1/completions", body.dump(), [&](const std::string& data) {
    if (data == "[DONE]") return false;
    const json ev = json::parse(data, nullptr, false);
    if (ev.contains("error")) {
      error = ev["error"].value("message", data);
      return false;
    }
    if (ev.contains("usage") && ev["usage"].is_object()) res.tokens = ev["usage"].value("completion_tokens", 0);
    for (const auto& c : ev.value("choices", json::array())) {
      if (!c.contains("text") || c["text"].get<std::string>().empty()) continue;
      const auto now = Clock::now();
      if (first) {
        res.ttft = std::chrono::duration<double>(now - start).count();
        first = false;
      } else {
        res.itl.push_back(std::chrono::duration<double>(now - last).count());
      }
      last = now;
    }
    return true;
  }, &error);
  res.duration = std::chrono::duration<double>(Clock::now() - start).count();
  res.ok = status == 200 && error.empty();
  res.error = status == 200 ? error : "HTTP " + std::to_string(status) + ": " + error;
  return res;
}

int run_bench(std::span<const std::string> args) {
  BenchOptions o;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() -> const std::string& {
        if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
        return args[++i];
      };
      if (a == "--model") {
        o.model = value();
      } else if (a == "--concurrency") {
        o.concurrency.clear();
        std::string list = value();
        for (size_t p = 0; p <= list.size();) {
          const size_t comma = std::min(list.find(',', p), list.size());
          o.concurrency.push_back(parse_int("--concurrency", list.substr(p, comma - p)));
          p = comma + 1;
        }
      } else if (a == "--prompt-tokens") {
        o.prompt_tokens = parse_int(a, value());
      } else if (a == "--gen-tokens") {
        o.gen_tokens = parse_int(a, value());
      } else if (a == "--requests-per-stream") {
        o.requests_per_stream = parse_int(a, value());
      } else if (o.url.empty() && a.rfind("--", 0) != 0) {
        o.url = a;
      } else {
        throw std::invalid_argument("unexpected argument " + a);
      }
    }
    if (o.url.empty()) throw std::invalid_argument("URL is required");
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "seatrt bench: %s\nusage: seatrt bench URL [--model NAME] [--concurrency 1,4,16] "
                 "[--prompt-tokens N] [--gen-tokens N] [--requests-per-stream N]\n",
                 e.what());
    return 2;
  }
  const char* key = std::getenv("SEATRT_API_KEY");
  if (!key) key = std::getenv("OPENAI_API_KEY");
  const server::HttpClient client(o.url, key ? key : "");
  if (o.model.empty()) {
    const json models = json::parse(client.get("/v1/models").body, nullptr, false);
    if (!models.contains("data") || models["data"].empty()) {
      std::fprintf(stderr, "seatrt bench: cannot list models at %s\n", o.url.c_str());
      return 1;
    }
    o.model = models["data"][0]["id"].get<std::string>();
  }
  std::printf("seatrt bench %s model=%s prompt~%d tokens gen=%d tokens\n", o.url.c_str(), o.model.c_str(),
              o.prompt_tokens, o.gen_tokens);
  std::printf("%6s %8s %6s %12s %12s %10s %10s %10s %10s\n", "conc", "requests", "failed", "tok/s total",
              "tok/s stream", "ttft p50", "ttft p99", "itl p50", "itl p99");
  int total_failed = 0;
  for (int conc : o.concurrency) {
    const int n = conc * o.requests_per_stream;
    std::vector<std::string> prompts;
    for (int i = 0; i < n; ++i) prompts.push_back(unique_prompt(client, o.model, o.prompt_tokens));
    std::vector<RequestResult> results(static_cast<size_t>(n));
    std::atomic<int> next{0};
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (int w = 0; w < conc; ++w)
      workers.emplace_back([&] {
        for (int i; (i = next++) < n;) {
          try {
            results[static_cast<size_t>(i)] = run_one(client, o, prompts[static_cast<size_t>(i)]);
          } catch (const std::exception& e) {
            results[static_cast<size_t>(i)].error = e.what();
          }
        }
      });
    for (auto& t : workers) t.join();
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> ttft, itl, per_stream;
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
    }
    double mean_stream = 0;
    for (double v : per_stream) mean_stream += v;
    if (!per_stream.empty()) mean_stream /= static_cast<double>(per_stream.size());
    std::printf("%6d %8d %6d %12.1f %12.1f %9.1fms %9.1fms %9.1fms %9.1fms\n", conc, n, failed,
                static_cast<double>(tokens) / wall, mean_stream, 1e3 * percentile(ttft, 0.5),
                1e3 * percentile(ttft, 0.99), 1e3 * percentile(itl, 0.5), 1e3 * percentile(itl, 0.99));
    if (!first_error.empty()) std::printf("       first failure: %s\n", first_error.c_str());
    std::fflush(stdout);
    total_failed += failed;
  }
  return total_failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("bench", "bench URL [--model NAME] [--concurrency 1,4,16] [--prompt-tokens N] [--gen-tokens N]",
                   "load-test a running seat: tokens/s, TTFT and inter-token latency", seatrt::cli::run_bench)
