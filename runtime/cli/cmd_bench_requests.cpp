// The requests of `seatrt bench` (bench_requests.hpp).  Named cmd_* only so
// runtime/cli/CMakeLists.txt's glob compiles it into the executable; it
// registers no command.
#include "bench_requests.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>
#include <stdexcept>

namespace seatrt::cli::bench {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

const char* const kWords[] = {"the",   "river", "carried", "light", "across", "quiet", "stones", "and",  "morning",
                              "birds", "answered", "with", "songs", "older", "than",  "the",    "town"};
constexpr size_t kWordCount = sizeof kWords / sizeof kWords[0];

int token_count(const server::HttpClient& client, const std::string& model, const std::string& text) {
  const auto r = client.post("/tokenize", json{{"model", model}, {"prompt", text}}.dump());
  const json j = json::parse(r.body, nullptr, false);
  if (r.status != 200 || !j.contains("count")) return -1;
  return j["count"].get<int>();
}

std::string text_of(const std::string& head, size_t words) {
  std::string text = head;
  for (size_t i = 0; i < words; ++i) text += std::string(" ") + kWords[i % kWordCount];
  return text;
}

}  // namespace

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto idx = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

std::string unique_text_prompt(const server::HttpClient& client, const std::string& model, int tokens) {
  std::random_device os_random;
  char nonce[40];
  std::snprintf(nonce, sizeof nonce, "%08x%08x%08x", os_random(), os_random(), os_random());
  const std::string head = std::string("Request ") + nonce + ". Continue this story:";
  // Words are about one token each; scale the word count by what the
  // tokenizer says (a few calls even for long prompts), then trim one by one.
  auto words = static_cast<size_t>(tokens);
  for (int round = 0; round < 4; ++round) {
    const int count = token_count(client, model, text_of(head, words));
    if (count <= 0) return text_of(head, words);  // no /tokenize: the estimate
    if (count <= tokens && count * 50 >= tokens * 49) return text_of(head, words);
    words = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(words) * tokens / count));
  }
  for (int count = token_count(client, model, text_of(head, words)); count > tokens && words > 1; --words)
    count = token_count(client, model, text_of(head, words - 1));
  return text_of(head, words);
}

std::vector<int32_t> token_pool(const server::HttpClient& client, const std::string& model) {
  std::string sample;
  for (size_t i = 0; i < kWordCount; ++i) sample += std::string(" ") + kWords[i] + " " + kWords[i] + "s";
  sample += " 0 1 2 3 4 5 6 7 8 9 , . ; : ! ? a b c d e f g h i j k l m n o p q r s t u v w x y z";
  const auto r = client.post("/tokenize", json{{"model", model}, {"prompt", sample}, {"add_special_tokens", false}}.dump());
  const json j = json::parse(r.body, nullptr, false);
  if (r.status != 200 || !j.contains("tokens") || !j["tokens"].is_array())
    throw std::runtime_error("cannot tokenize a sample text (/tokenize answered HTTP " + std::to_string(r.status) + ")");
  std::set<int32_t> ids;
  for (const auto& t : j["tokens"])
    if (t.is_number_integer()) ids.insert(t.get<int32_t>());
  if (ids.size() < 8) throw std::runtime_error("the tokenizer gave fewer than 8 distinct ids for a sample text");
  return {ids.begin(), ids.end()};
}

json random_id_prompt(const std::vector<int32_t>& pool, int tokens) {
  std::random_device os_random;
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  json ids = json::array();
  for (int i = 0; i < tokens; ++i) ids.push_back(pool[pick(os_random)]);
  return ids;
}

RequestResult run_completion(const server::HttpClient& client, const std::string& model, const json& prompt,
                             int max_tokens, double temperature) {
  RequestResult res;
  const json body = {{"model", model},   {"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", temperature},
                     {"stream", true}, {"stream_options", {{"include_usage", true}}}};
  const auto start = Clock::now();
  auto last = start;
  bool first = true;
  std::string error;
  int status = 0;
  try {
    status = client.post_events("/v1/completions", body.dump(), [&](const std::string& data) {
      if (data == "[DONE]") return false;
      const json ev = json::parse(data, nullptr, false);
      if (ev.contains("error")) {
        error = ev["error"].is_object() ? ev["error"].value("message", data) : data;
        return false;
      }
      if (ev.contains("usage") && ev["usage"].is_object()) {
        res.tokens = ev["usage"].value("completion_tokens", 0);
        res.prompt_tokens = ev["usage"].value("prompt_tokens", 0);
      }
      // Every choice event carries a token's text or the finish (the
      // server sends none without a payload).
      if (!ev.contains("choices") || !ev["choices"].is_array() || ev["choices"].empty()) return true;
      const auto now = Clock::now();
      if (first) {
        res.ttft = std::chrono::duration<double>(now - start).count();
        first = false;
      } else {
        const auto& c = ev["choices"][0];
        if (c.contains("text") && c["text"].is_string() && !c["text"].get<std::string>().empty())
          res.itl.push_back(std::chrono::duration<double>(now - last).count());
      }
      last = now;
      return true;
    }, &error);
  } catch (const std::exception& e) {
    error = e.what();
  }
  res.duration = std::chrono::duration<double>(Clock::now() - start).count();
  res.ok = status == 200 && error.empty() && !first;
  if (!res.ok)
    res.error = status == 200 ? (error.empty() ? "no token arrived" : error)
                              : "HTTP " + std::to_string(status) + ": " + error;
  return res;
}

}  // namespace seatrt::cli::bench
