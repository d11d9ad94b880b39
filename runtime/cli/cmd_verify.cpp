// `seatrt verify URL SERVED_NAME`: the operator's checks of a running seat.
// Each check prints PASS or FAIL with the reason; the exit status is
// non-zero when any failed, and the last line names the failed checks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "server/http_client.hpp"

namespace seatrt::cli {
namespace {

using nlohmann::json;

struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

json call(const server::HttpClient& c, const std::string& path, const json* body) {
  const auto r = body ? c.post(path, body->dump()) : c.get(path);
  json j = json::parse(r.body, nullptr, false);
  if (r.status != 200) {
    std::string msg = j.is_object() && j.contains("error") ? j["error"].value("message", r.body) : r.body;
    throw CheckFailed(path + " answered " + std::to_string(r.status) + ": " + msg);
  }
  if (j.is_discarded()) throw CheckFailed(path + " answered with invalid JSON");
  return j;
}

json chat_body(const std::string& model, const std::string& content, int max_tokens) {
  return {{"model", model}, {"messages", json::array({{{"role", "user"}, {"content", content}}})},
          {"max_tokens", max_tokens}, {"temperature", 0}};
}


const json kWeatherTool = {
    {"type", "function"},
    {"function",
     {{"name", "get_weather"},
      {"description", "Get the weather forecast for a city"},
      {"parameters",
       {{"type", "object"},
        {"properties", {{"city", {{"type", "string"}}}, {"days", {{"type", "integer"}}}}},
        {"required", json::array({"city"})}}}}}};

// The forced call's tool: an enum keeps the constrained arguments short
// whatever the weights (a free string may run to max_tokens on a random model).
const json kForcedWeatherTool = {
    {"type", "function"},
    {"function",
     {{"name", "get_weather"},
      {"description", "Get the weather forecast for a city"},
      {"parameters",
       {{"type", "object"},
        {"properties",
         {{"city", {{"type", "string"}, {"enum", json::array({"Paris", "London", "Tokyo"})}}},
          {"days", {{"type", "integer"}}}}},
        {"required", json::array({"city"})}}}}}};

constexpr const char* kLeakMarkers[] = {"<|channel>", "<channel|>", "<|turn>", "<turn|>", "<|tool_call>"};

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// What a leak check needs to tell a leaked control token from ordinary text
// that spells one (a model may write "<channel|>" with plain pieces): the
// control tokens' ids (from /tokenize) and the sampled tokens as
// "token_id:N" logprobs (vLLM's return_tokens_as_token_ids).
struct SampledTokens {
  std::vector<int32_t> control_ids;
  json logprobs;  // the choice's logprobs.content, or null
};

// The text of the sampled tokens that are not control tokens, or nullopt
// when the server did not list them by id.
std::optional<std::string> ordinary_text(const SampledTokens& sampled) {
  if (!sampled.logprobs.is_array() || sampled.logprobs.empty()) return std::nullopt;
  std::string text;
  for (const auto& e : sampled.logprobs) {
    const std::string token = e.value("token", "");
    if (!token.starts_with("token_id:") || !e.contains("bytes") || !e["bytes"].is_array()) return std::nullopt;
    const int32_t id = std::atoi(token.c_str() + 9);
    if (std::find(sampled.control_ids.begin(), sampled.control_ids.end(), id) != sampled.control_ids.end()) continue;
    for (const auto& b : e["bytes"]) text += static_cast<char>(b.get<int>());
  }
  return text;
}

void check_prose(const std::string& content, const json& message, const SampledTokens& sampled = {}) {
  if (content.empty()) throw CheckFailed("empty content");
  const auto ordinary = ordinary_text(sampled);
  for (const char* leak : kLeakMarkers)
    if (const size_t n = occurrences(content, leak); n > (ordinary ? occurrences(*ordinary, leak) : 0))
      throw CheckFailed(std::string("control token leaked: ") + leak);
  if (content.rfind("thought", 0) == 0) throw CheckFailed("content starts with a channel prefix 'thought'");
  if (message.contains("reasoning_content") || message.contains("reasoning"))
    throw CheckFailed("a reasoning field is present although thinking is off");
}

// A prose check's request also asks for the sampled tokens by id.
json with_token_ids(json body) {
  body["logprobs"] = true;
  body["return_tokens_as_token_ids"] = true;
  return body;
}

// The ids of the leak markers' control tokens (one token each), by /tokenize.
std::vector<int32_t> control_token_ids(const server::HttpClient& c, const std::string& model) {
  std::vector<int32_t> ids;
  for (const char* marker : kLeakMarkers) {
    const json body = {{"model", model}, {"prompt", marker}, {"add_special_tokens", false}};
    const auto r = c.post("/tokenize", body.dump());
    const json j = json::parse(r.body, nullptr, false);
    if (r.status == 200 && j.is_object() && j.contains("tokens") && j["tokens"].size() == 1)
      ids.push_back(j["tokens"][0].get<int32_t>());
  }
  return ids;
}

SampledTokens sampled_tokens(const json& response, const std::vector<int32_t>& control_ids) {
  const json& choice = response["choices"][0];
  json lp = choice.contains("logprobs") && choice["logprobs"].is_object()
                ? choice["logprobs"].value("content", json(nullptr))
                : json(nullptr);
  return {control_ids, std::move(lp)};
}


// The first tool call of `message`, checked against kWeatherTool's schema
// (name, a JSON object, required string city, optional integer days).
json check_weather_call(const json& message) {
  if (!message.contains("tool_calls") || !message["tool_calls"].is_array() || message["tool_calls"].empty())
    throw CheckFailed("no tool call was parsed");
  const json& call0 = message["tool_calls"][0];
  if (!call0.contains("id") || !call0["id"].is_string() || call0.value("type", "") != "function")
    throw CheckFailed("tool call without id/type: " + call0.dump());
  const json& fn = call0["function"];
  if (fn.value("name", "") != "get_weather") throw CheckFailed("called '" + fn.value("name", "") + "'");
  const json a = json::parse(fn.value("arguments", ""), nullptr, false);
  if (!a.is_object()) throw CheckFailed("arguments are not a JSON object: " + fn.value("arguments", ""));
  if (!a.contains("city") || !a["city"].is_string()) throw CheckFailed("required string 'city' missing: " + a.dump());
  if (a.contains("days") && !a["days"].is_number_integer()) throw CheckFailed("'days' is not an integer: " + a.dump());
  for (const auto& [key, value] : a.items())
    if (key != "city" && key != "days") throw CheckFailed("unknown argument '" + key + "'");
  return a;
}

int run_verify(std::span<const std::string> args) {
  bool allow_prose_tool_answer = false;
  std::vector<std::string> positional;
  for (const auto& a : args) {
    if (a == "--allow-prose-tool-answer") allow_prose_tool_answer = true;
    else positional.push_back(a);
  }
  if (positional.size() != 2) {
    std::fprintf(stderr,
                 "usage: seatrt verify URL SERVED_NAME [--allow-prose-tool-answer]   (API key from $SEATRT_API_KEY "
                 "or $OPENAI_API_KEY)\n");
    return 2;
  }
  const char* key = std::getenv("SEATRT_API_KEY");
  if (!key) key = std::getenv("OPENAI_API_KEY");
  const server::HttpClient client(positional[0], key ? key : "");
  const std::string model = positional[1];
  const std::vector<int32_t> control_ids = control_token_ids(client, model);
  std::vector<std::string> failed;
  auto check = [&](const std::string& name, const std::function<std::string()>& body) {
    try {
      const std::string detail = body();
      std::printf("PASS %-22s %s\n", name.c_str(), detail.c_str());
    } catch (const std::exception& e) {
      std::printf("FAIL %-22s %s\n", name.c_str(), e.what());
      failed.push_back(name);
    }
    std::fflush(stdout);
  };

  check("served-name", [&] {
    const json models = call(client, "/v1/models", nullptr);
    for (const auto& m : models.value("data", json::array()))
      if (m.value("id", "") == model) {
        if (!m.contains("max_model_len")) throw CheckFailed("no max_model_len for " + model);
        return "max context " + std::to_string(m["max_model_len"].get<int64_t>());
      }
    throw CheckFailed("'" + model + "' is not in /v1/models");
  });
  check("kv-pool", [&] {
    const json seat = call(client, "/v1/seat", nullptr);
    const json kv = seat.value("kv_pool", json::object());
    if (!kv.contains("bytes") || !kv.contains("tokens") || !kv.contains("max_context_multiple"))
      throw CheckFailed("/v1/seat reports no KV pool");
    char line[160];
    std::snprintf(line, sizeof line, "KV pool %lld tokens, %.2fx max context, %lld bytes",
                  static_cast<long long>(kv["tokens"].get<int64_t>()), kv["max_context_multiple"].get<double>(),
                  static_cast<long long>(kv["bytes"].get<int64_t>()));
    return std::string(line);
  });
  check("plain-prose", [&] {
    const json body = with_token_ids(chat_body(model, "Reply with one short friendly sentence about the sea.", 64));
    const json r = call(client, "/v1/chat/completions", &body);
    const json& msg = r["choices"][0]["message"];
    const std::string content = msg.value("content", json(nullptr)).is_string() ? msg["content"].get<std::string>() : "";
    check_prose(content, msg, sampled_tokens(r, control_ids));
    return "\"" + content.substr(0, 60) + "\"";
  });
  // The forced call goes through constrained decoding, so it must parse and
  // match the schema with any weights; it proves parser + constraint wiring.
  check("tool-call-forced", [&] {
    json body = chat_body(model, "What is the weather in Paris for the next 2 days?", 128);
    body["tools"] = json::array({kForcedWeatherTool});
    body["tool_choice"] = {{"type", "function"}, {"function", {{"name", "get_weather"}}}};
    const json r = call(client, "/v1/chat/completions", &body);
    const json a = check_weather_call(r["choices"][0]["message"]);
    const auto& allowed = kForcedWeatherTool["function"]["parameters"]["properties"]["city"]["enum"];
    if (std::find(allowed.begin(), allowed.end(), a["city"]) == allowed.end())
      throw CheckFailed("'city' is not one of the enum values: " + a.dump());
    if (r["choices"][0].value("finish_reason", "") == "length")
      throw CheckFailed("the forced call was cut off by max_tokens: " + a.dump());
    return "get_weather(" + a.dump() + ")";
  });
  // The auto call shows that the model itself chooses the tool and the
  // parser reads its native syntax.  A random-weight model (the demo seat)
  // cannot choose it: --allow-prose-tool-answer downgrades "answered in clean
  // prose instead" to a warning, never leaked markup or a broken call.
  check("tool-call-auto", [&] {
    json body = with_token_ids(
        chat_body(model, "What is the weather in Paris for the next 2 days? Use the get_weather tool.", 128));
    body["tools"] = json::array({kWeatherTool});
    body["tool_choice"] = "auto";
    const json r = call(client, "/v1/chat/completions", &body);
    const json& msg = r["choices"][0]["message"];
    if ((!msg.contains("tool_calls") || msg["tool_calls"].empty()) && allow_prose_tool_answer) {
      const std::string content = msg.value("content", json(nullptr)).is_string() ? msg["content"].get<std::string>() : "";
      check_prose(content, msg, sampled_tokens(r, control_ids));
      return std::string("WARNING: the model answered in prose (allowed by --allow-prose-tool-answer)");
    }
    const json a = check_weather_call(msg);
    std::string city = a.value("city", "");
    for (auto& ch : city) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (city.find("paris") == std::string::npos) throw CheckFailed("wrong arguments: " + a.dump());
    if (r["choices"][0].value("finish_reason", "") != "tool_calls")
      throw CheckFailed("finish_reason is " + r["choices"][0].value("finish_reason", ""));
    return "get_weather(" + a.dump() + ")";
  });
  check("finite-logprobs", [&] {
    json body = chat_body(model, "Count from one to five.", 16);
    body["logprobs"] = true;
    body["top_logprobs"] = 2;
    const json r = call(client, "/v1/chat/completions", &body);
    const json& lp = r["choices"][0]["logprobs"];
    if (!lp.is_object() || !lp.contains("content") || lp["content"].empty()) throw CheckFailed("no logprobs returned");
    for (const auto& e : lp["content"])
      if (!e["logprob"].is_number() || !std::isfinite(e["logprob"].get<double>()))
        throw CheckFailed("a logprob is not a finite number: " + e.dump());
    if (r["choices"][0]["message"].value("content", json(nullptr)).is_null() &&
        !r["choices"][0]["message"].contains("tool_calls"))
      throw CheckFailed("content is null");
    return std::to_string(lp["content"].size()) + " finite logprobs";
  });
  check("stream-agrees", [&] {
    json body = chat_body(model, "Name three colours.", 32);
    const json full = call(client, "/v1/chat/completions", &body);
    const std::string expected = full["choices"][0]["message"].value("content", json("")).is_string()
                                     ? full["choices"][0]["message"]["content"].get<std::string>()
                                     : "";
    body["stream"] = true;
    std::string streamed, error;
    const int status = client.post_events("/v1/chat/completions", body.dump(), [&](const std::string& data) {
      if (data == "[DONE]") return false;
      const json ev = json::parse(data, nullptr, false);
      if (ev.contains("error")) error = ev["error"].value("message", data);
      for (const auto& c : ev.value("choices", json::array()))
        if (c.contains("delta") && c["delta"].contains("content") && c["delta"]["content"].is_string())
          streamed += c["delta"]["content"].get<std::string>();
      return true;
    }, &error);
    if (status != 200 || !error.empty()) throw CheckFailed("stream failed: " + error);
    if (streamed != expected) throw CheckFailed("streamed \"" + streamed + "\" but non-streaming gave \"" + expected + "\"");
    return std::to_string(streamed.size()) + " bytes identical";
  });
  check("ready", [&] {
    const auto r = client.get("/ready");
    if (r.status != 200) throw CheckFailed("/ready answered " + std::to_string(r.status) + ": " + r.body);
    return std::string("ready");
  });

  if (failed.empty()) {
    std::printf("verify: all checks passed for %s at %s\n", model.c_str(), positional[0].c_str());
    return 0;
  }
  std::string names;
  for (const auto& f : failed) names += (names.empty() ? "" : ", ") + f;
  std::printf("verify: FAILED: %s\n", names.c_str());
  return 1;
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("verify", "verify URL SERVED_NAME [--allow-prose-tool-answer]", "run the operator's checks against a running seat",
                   seatrt::cli::run_verify)
