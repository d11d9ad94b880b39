// The seat's HTTP API: OpenAI-compatible endpoints, tokenizer endpoints,
// health/readiness, metrics and the seat report.  Authentication (bearer
// key, constant-time compare) guards everything except /health and /ready.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "http_types.hpp"
#include "metrics.hpp"
#include "openai_request.hpp"
#include "seat_runtime.hpp"
#include "serve_generation.hpp"

namespace seatrt::server {

class Api {
 public:
  explicit Api(SeatRuntime& seat);

  void handle(const HttpRequest& request, ResponseWriter& writer);

  // Generates a few tokens at load; ready only if they came back with
  // finite logprobs and non-empty text.  Returns "" on success, else why not.
  std::string run_canary();
  bool ready(std::string* reason = nullptr) const;
  // No new generations from now on (they get 503).
  void begin_drain() { draining_ = true; }
  // The drain's time is up: generations still running end with a 503.
  void expire_drain() { drain_expired_ = true; }
  int64_t in_flight() const { return in_flight_; }
  Metrics& metrics() { return metrics_; }

 private:
  void route(const HttpRequest& request, ResponseWriter& writer, std::string& endpoint, int& status,
             GenerationRecord& generation);
  bool authorized(const std::string& header) const;
  const std::string& check_model(const std::string& name) const;
  // A generation job for `flavor` under the served name `model` (404 when it
  // is not served, 503 while draining).
  GenerationJob new_job(Flavor flavor, const std::string& model) const;
  void reply_json(ResponseWriter& w, int status, const nlohmann::json& body, int& status_out);

  int chat(const HttpRequest& req, ResponseWriter& w, GenerationRecord& record);
  // /v1/responses: translated to the chat request it amounts to (responses_request.hpp).
  int responses(const HttpRequest& req, ResponseWriter& w, GenerationRecord& record);
  // A chat generation from a chat body as sent (or translated): `body` for
  // validation, `ordered` (the same, key order kept) for the template;
  // `job` names the flavor.
  int serve_chat(const nlohmann::json& body, const nlohmann::ordered_json& ordered, GenerationJob job,
                 ResponseWriter& w, GenerationRecord& record);
  int completion(const HttpRequest& req, ResponseWriter& w, GenerationRecord& record);
  int tokenize(const HttpRequest& req, ResponseWriter& w);
  // The prompt text of a validated chat request `r` (rendered from `ordered`,
  // the body as sent) and, in *kwargs, the template variables it used.
  std::string render_chat_prompt(const ChatRequest& r, const nlohmann::ordered_json& ordered,
                                 nlohmann::ordered_json* kwargs) const;
  int detokenize(const HttpRequest& req, ResponseWriter& w);
  nlohmann::json seat_report() const;

  SeatRuntime& seat_;
  Metrics metrics_;
  std::atomic<bool> draining_{false};
  std::atomic<bool> drain_expired_{false};
  std::atomic<int64_t> in_flight_{0};
  mutable std::mutex ready_mutex_;
  bool canary_ok_ = false;
  std::string canary_detail_ = "the canary generation has not run";
};

}  // namespace seatrt::server
