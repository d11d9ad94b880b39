#include "api.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <set>
#include <string_view>
#include <thread>

#include "access_log.hpp"
#include "api_error.hpp"
#include "chat_continuation.hpp"
#include "responses_request.hpp"
#include "json_text.hpp"
#include "generation.hpp"
#include "serve_generation.hpp"

namespace seatrt::server {

using nlohmann::json;

namespace {

// The chat template variables the server sets from the request itself
// (ChatTemplate::render): a chat_template_kwargs entry may not replace them.
bool is_reserved_template_variable(const std::string& name) {
  return name == "messages" || name == "tools" || name == "documents" || name == "add_generation_prompt";
}

// Compares without leaking where the first difference is.
bool constant_time_equal(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

constexpr std::string_view kModelPrefix = "/v1/models/";

// %XX escapes decoded (a path segment as a client's URL encoder wrote it);
// a malformed escape is kept as it is.
std::string percent_decoded(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

ApiError not_found(const std::string& path) {
  return ApiError(404, "NotFoundError", "no route for " + path);
}

}  // namespace

Api::Api(SeatRuntime& seat) : seat_(seat) {}

bool Api::authorized(const std::string& header) const {
  if (!seat_.api_key) return true;
  // "Bearer <key>"; the scheme is case-insensitive and may be followed by
  // several spaces (RFC 9110 11.1, 11.4).
  std::string scheme = header.substr(0, 7);
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string given;
  if (scheme == "bearer ") {
    const size_t start = header.find_first_not_of(' ', 7);
    given = start == std::string::npos ? std::string() : header.substr(start);
  }
  return constant_time_equal(given, *seat_.api_key);
}

const std::string& Api::check_model(const std::string& name) const {
  for (const auto& n : seat_.served_names)
    if (n == name) return n;
  std::string served;
  for (const auto& n : seat_.served_names) served += (served.empty() ? "" : ", ") + n;
  throw ApiError(404, "NotFoundError",
                 "The model `" + name + "` does not exist. This seat serves: " + served, "model");
}

// /ready's limits on the engine's health (EngineStats).
constexpr int64_t kFailedStepsNotReady = 3;
constexpr double kStuckStepSeconds = 30.0;

bool Api::ready(std::string* reason) const {
  std::lock_guard lock(ready_mutex_);
  // Draining: new requests get 503, so a load balancer must stop sending them.
  if (draining_) {
    if (reason) *reason = "the server is shutting down (draining the requests it holds)";
    return false;
  }
  const auto non_finite = seat_.engine->stats().non_finite;
  if (!canary_ok_) {
    if (reason) *reason = canary_detail_;
    return false;
  }
  if (non_finite > 0) {
    if (reason)
      *reason = "a request saw non-finite logits (NaN or infinity) " + std::to_string(non_finite) +
                " time(s) since load; the model is producing invalid numbers";
    return false;
  }
  // A device error that sticks fails every step; a plugin that hangs holds
  // one step for ever.  Either way no request can be served.
  const auto stats = seat_.engine->stats();
  if (stats.failed_steps_in_a_row >= kFailedStepsNotReady) {
    if (reason)
      *reason = "the last " + std::to_string(stats.failed_steps_in_a_row) +
                " forward steps failed; the last: " + stats.last_step_error;
    return false;
  }
  if (stats.step_running_s > kStuckStepSeconds) {
    if (reason)
      *reason = "one engine step has run for " + std::to_string(static_cast<int64_t>(stats.step_running_s)) +
                " s (a kernel or parser plugin may be hung)";
    return false;
  }
  return true;
}

std::string Api::run_canary() {
  std::string problem;
  try {
    std::vector<int32_t> prompt;
    if (seat_.render_chat) {
      nlohmann::ordered_json messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Say hello."}}});
      const auto kwargs = nlohmann::ordered_json::parse(seat_.default_chat_template_kwargs.dump());
      prompt = seat_.tokenizer->encode(seat_.render_chat(messages, nullptr, kwargs, true), false);
    } else {
      prompt = seat_.tokenizer->encode("Hello", true);
    }
    GenerationParams p;
    p.max_tokens = 4;
    p.sampling.temperature = 0;
    p.logprobs = true;
    p.top_logprobs = 1;
    p.skip_special_tokens = true;
    Generation gen(seat_, p, {prompt}, nullptr);
    if (gen.start() != Generation::Submit::ok) throw std::runtime_error("the engine refused the canary");
    std::string text;
    int logprobs = 0;
    for (;;) {
      auto ev = gen.next(std::chrono::milliseconds(600000));
      if (!ev) throw std::runtime_error("the canary generation timed out");
      for (const auto& lp : ev->logprobs) {
        if (!std::isfinite(lp.logprob)) throw std::runtime_error("the canary got a non-finite logprob");
        ++logprobs;
      }
      text += ev->delta.content + ev->delta.reasoning;
      if (ev->finished) {
        if (!ev->error.empty()) throw std::runtime_error(ev->error);
        break;
      }
    }
    if (logprobs == 0) throw std::runtime_error("the canary generated no tokens");
    if (text.empty()) throw std::runtime_error("the canary generated only empty text");
  } catch (const std::exception& e) {
    problem = std::string("canary generation failed: ") + e.what();
  }
  std::lock_guard lock(ready_mutex_);
  canary_ok_ = problem.empty();
  canary_detail_ = problem;
  return problem;
}

void Api::reply_json(ResponseWriter& w, int status, const json& body, int& status_out) {
  w.send(status, "application/json", json_text(body));
  status_out = status;
}

void Api::handle(const HttpRequest& request, ResponseWriter& writer) {
  const auto start = std::chrono::steady_clock::now();
  std::string endpoint = "other";
  int status = 500;
  GenerationRecord generation;
  std::string error;
  ++in_flight_;
  try {
    route(request, writer, endpoint, status, generation);
  } catch (const ApiError& e) {
    writer.send(e.status(), "application/json", json_text(e.to_json()), e.headers());
    status = e.status();
    error = e.message();
  } catch (const std::exception& e) {
    writer.send(500, "application/json", json_text(ApiError(500, "InternalServerError", e.what()).to_json()));
    status = 500;
    error = e.what();
  } catch (...) {  // a plugin let a foreign exception cross the ABI
    error = "a non-standard exception (a plugin broke the ABI's no-exception rule)";
    writer.send(500, "application/json", json_text(ApiError(500, "InternalServerError", error).to_json()));
    status = 500;
  }
  --in_flight_;
  metrics_.count_request(endpoint, status);
  if (error.empty()) error = generation.error;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  log_access(request, endpoint, status, ms, generation, error);
}

void Api::route(const HttpRequest& req, ResponseWriter& w, std::string& endpoint, int& status,
                GenerationRecord& generation) {
  const auto& path = req.path;
  // A GET endpoint answers HEAD too (RFC 9110 9.1: the transport then
  // sends the headers only); a wrong method is a 405 naming the right one.
  auto require = [&](const char* method) {
    const bool get = std::string_view(method) == "GET";
    if (req.method == method || (get && req.method == "HEAD")) return;
    throw ApiError(405, "MethodNotAllowedError", path + " accepts " + method + ", not " + req.method)
        .with_header("Allow", get ? "GET, HEAD" : method);
  };
  if (path == "/health") {
    endpoint = "health";
    require("GET");
    return reply_json(w, 200, {{"status", "ok"}}, status);
  }
  if (path == "/version") {  // vLLM's; unauthenticated, as /health
    endpoint = "version";
    require("GET");
    return reply_json(w, 200, {{"version", SEATRT_VERSION}}, status);
  }
  if (path == "/ready") {
    endpoint = "ready";
    require("GET");
    std::string reason;
    if (ready(&reason)) return reply_json(w, 200, {{"ready", true}}, status);
    return reply_json(w, 503, {{"ready", false}, {"reason", reason}}, status);
  }
  // Named before the key is checked, so a refused request counts under its endpoint.
  static const std::pair<const char*, const char*> kNames[] = {
      {"/v1/models", "models"}, {"/v1/seat", "seat"}, {"/metrics", "metrics"},
      {"/v1/chat/completions", "chat_completions"}, {"/v1/completions", "completions"}, {"/v1/responses", "responses"},
      {"/tokenize", "tokenize"}, {"/detokenize", "detokenize"}};
  for (const auto& [p, name] : kNames)
    if (path == p) endpoint = name;
  if (path.starts_with(kModelPrefix)) endpoint = "models";
  if (!authorized(req.authorization))
    throw ApiError(401, "AuthenticationError", "invalid or missing API key (send Authorization: Bearer <key>)")
        .with_header("WWW-Authenticate", "Bearer");
  auto model_object = [&](const std::string& name) {
    return json{{"id", name}, {"object", "model"}, {"created", static_cast<int64_t>(std::time(nullptr))},
                {"owned_by", "seatrt"}, {"root", seat_.served_names.front()}, {"parent", nullptr},
                {"max_model_len", seat_.max_model_len}};
  };
  if (path == "/v1/models") {
    endpoint = "models";
    require("GET");
    json data = json::array();
    for (const auto& n : seat_.served_names) data.push_back(model_object(n));
    return reply_json(w, 200, {{"object", "list"}, {"data", data}}, status);
  }
  if (path.starts_with(kModelPrefix)) {  // OpenAI's models.retrieve; the id is percent-encoded ("a%2Fb")
    endpoint = "models";
    require("GET");
    return reply_json(w, 200, model_object(check_model(percent_decoded(path.substr(kModelPrefix.size())))), status);
  }
  if (path == "/v1/seat") {
    endpoint = "seat";
    require("GET");
    return reply_json(w, 200, seat_report(), status);
  }
  if (path == "/metrics") {
    endpoint = "metrics";
    require("GET");
    w.send(200, "text/plain; version=0.0.4", metrics_.render(seat_.engine->stats()));
    status = 200;
    return;
  }
  if (path == "/v1/chat/completions") {
    endpoint = "chat_completions";
    require("POST");
    status = chat(req, w, generation);
    return;
  }
  if (path == "/v1/responses") {
    endpoint = "responses";
    require("POST");
    status = responses(req, w, generation);
    return;
  }
  if (path == "/v1/completions") {
    endpoint = "completions";
    require("POST");
    status = completion(req, w, generation);
    return;
  }
  if (path == "/tokenize") {
    endpoint = "tokenize";
    require("POST");
    status = tokenize(req, w);
    return;
  }
  if (path == "/detokenize") {
    endpoint = "detokenize";
    require("POST");
    status = detokenize(req, w);
    return;
  }
  throw not_found(path);
}

json Api::seat_report() const {
  json r = seat_.seat_info;
  const auto s = seat_.engine->stats();
  const auto& plan = seat_.engine->kv_plan();
  json kv = r.value("kv_pool", json::object());
  kv["bytes"] = plan.pool_bytes;
  kv["tokens"] = plan.capacity_tokens;
  kv["max_context_multiple"] = plan.context_multiple;
  kv["block_size"] = plan.block_size;
  kv["blocks_total"] = s.blocks_total;
  kv["blocks_used"] = s.blocks_used;
  r["kv_pool"] = kv;
  r["served_model_names"] = seat_.served_names;
  r["max_model_len"] = seat_.max_model_len;
  r["running"] = s.running;
  r["waiting"] = s.waiting;
  std::string reason;
  r["ready"] = ready(&reason);
  if (!reason.empty()) r["not_ready_reason"] = reason;
  return r;
}

namespace {

// Refuses, before any tokenizer work, a prompt text that cannot fit the
// context whatever its tokens: each token stands for at most
// max_token_bytes of text, and a margin of 4 covers normalizers that shrink
// text.  (A 60 MB body used to cost seconds of CPU and gigabytes to learn
// that.)
void refuse_certainly_too_long(const SeatRuntime& seat, std::string_view text, const char* prompt_field) {
  const double most = static_cast<double>(seat.max_model_len) * static_cast<double>(seat.max_token_bytes) * 4.0;
  if (static_cast<double>(text.size()) > most)
    throw bad_request("This model's maximum context length is " + std::to_string(seat.max_model_len) +
                          " tokens. However, your request's prompt is " + std::to_string(text.size()) +
                          " bytes, more than any " + std::to_string(seat.max_model_len) +
                          " tokens can hold. Please reduce the length of the input.",
                      prompt_field);
}

// prompt_field: the request field that holds the prompt ("messages" or "prompt").
void check_lengths(const SeatRuntime& seat, const GenerationParams& p, size_t prompt_tokens, const char* prompt_field) {
  const auto prompt = static_cast<int64_t>(prompt_tokens);
  if (prompt == 0) throw bad_request("the prompt is empty", prompt_field);
  if (prompt >= seat.max_model_len)
    throw bad_request("This model's maximum context length is " + std::to_string(seat.max_model_len) +
                          " tokens. However, your request has " + std::to_string(prompt) +
                          " input tokens, leaving no room for output. Please reduce the length of the input.",
                      prompt_field);
  if (p.max_tokens && prompt + *p.max_tokens > seat.max_model_len)
    throw bad_request("'max_tokens' is too large: " + std::to_string(*p.max_tokens) +
                          ". This model's maximum context length is " + std::to_string(seat.max_model_len) +
                          " tokens and your request has " + std::to_string(prompt) + " input tokens (" +
                          std::to_string(prompt + *p.max_tokens) + " > " + std::to_string(seat.max_model_len) + ").",
                      "max_tokens");
}

void check_ids(const SeatRuntime& seat, const std::vector<int32_t>& ids, const char* field) {
  for (int32_t id : ids)
    if (id < 0 || id >= seat.tokenizer->vocab_size())
      throw bad_request(std::string("'") + field + "' holds token id " + std::to_string(id) +
                            ", outside the vocabulary [0, " + std::to_string(seat.tokenizer->vocab_size()) + ")",
                        field);
}

// Tool calls and response formats are parsed and enforced by the seat's
// tool parser plugin: without one they are refused, not silently ignored
// (tools with tool_choice "none" ask for nothing and pass).
void refuse_what_no_parser_serves(const SeatRuntime& seat, const ChatRequest& r) {
  if (seat.tool_parser.api) return;
  const bool choice_none = r.tool_choice.is_string() && r.tool_choice.get<std::string>() == "none";
  if (r.tools.is_array() && !r.tools.empty() && !choice_none)
    throw bad_request("this seat has no tool parser ([parsers] tool in its seat file): 'tools' cannot be served "
                      "(leave them out, or send tool_choice \"none\")", "tools");
  if (!r.tool_choice.is_null() && !choice_none)
    throw bad_request("this seat has no tool parser ([parsers] tool in its seat file): 'tool_choice' cannot be "
                      "enforced", "tool_choice");
  if (r.response_format.is_object() && r.response_format.value("type", "text") != "text")
    throw bad_request("this seat has no tool parser ([parsers] tool in its seat file) to enforce 'response_format' "
                      "of type '" + r.response_format.value("type", "") + "'", "response_format");
}

// truncate_prompt_tokens (vLLM): keep the prompt's last N tokens; -1 keeps
// as many as leave room for max_tokens (at least one) in max_model_len.
void truncate_prompt(const SeatRuntime& seat, const GenerationParams& g, std::vector<int32_t>& prompt) {
  if (!g.truncate_prompt_tokens) return;
  int64_t keep = *g.truncate_prompt_tokens;
  if (keep < 0) keep = seat.max_model_len - std::max<int64_t>(1, g.max_tokens.value_or(1));
  if (keep > 0 && static_cast<int64_t>(prompt.size()) > keep)
    prompt.erase(prompt.begin(), prompt.end() - static_cast<std::ptrdiff_t>(keep));
}

// A logit bias needs a sampler that honours it (a provider's sample op
// must support rows that carry one) and ids inside the logits.
void check_logit_bias(const SeatRuntime& seat, const GenerationParams& g) {
  const auto& ids = g.sampling.bias_ids;
  if (ids.empty()) return;
  if (!seat.engine->supports_logit_bias())
    throw bad_request("'logit_bias' is not supported by this seat: its kernel provider '" + seat.kernel_provider +
                          "' does not support a sample op whose rows carry a bias", "logit_bias");
  const int32_t vocab = seat.engine->vocab_size();
  for (int32_t id : ids)
    if (id >= vocab)
      throw bad_request("'logit_bias' holds token id " + std::to_string(id) + ", outside the vocabulary [0, " +
                            std::to_string(vocab) + ")", "logit_bias");
}

}  // namespace

std::string Api::render_chat_prompt(const ChatRequest& r, const nlohmann::ordered_json& ordered,
                                    nlohmann::ordered_json* kwargs_out) const {
  if (!seat_.render_chat)
    throw bad_request("this seat has no chat template (none beside its model, none in its seat file): "
                      "use /v1/completions", "messages");
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::parse(seat_.default_chat_template_kwargs.dump());
  if (ordered.contains("chat_template_kwargs") && ordered["chat_template_kwargs"].is_object())
    for (auto it = ordered["chat_template_kwargs"].begin(); it != ordered["chat_template_kwargs"].end(); ++it) {
      // The variables the server itself passes would replace what it
      // validated (messages' roles and parts, the tools the parser knows).
      if (is_reserved_template_variable(it.key()))
        throw bad_request("'chat_template_kwargs." + it.key() + "' is set by the server from the request; "
                          "send it as the request's own field",
                          "chat_template_kwargs");
      kwargs[it.key()] = it.value();
    }
  const bool choice_none = r.tool_choice.is_string() && r.tool_choice.get<std::string>() == "none";
  nlohmann::ordered_json tools = nullptr;
  if (!(choice_none && seat_.exclude_tools_when_tool_choice_none) && !r.tools.is_null()) tools = ordered["tools"];
  nlohmann::ordered_json messages = ordered["messages"];
  std::string final_text;
  if (r.continue_final_message) final_text = mark_final_message(messages);
  std::string prompt_text;
  try {
    prompt_text = seat_.render_chat(messages, tools, kwargs, r.add_generation_prompt);
  } catch (const std::exception& e) {
    throw bad_request(std::string("the chat template could not render these messages: ") + e.what(), "messages");
  }
  if (r.continue_final_message) prompt_text = cut_at_final_message(prompt_text, final_text);
  if (kwargs_out) *kwargs_out = std::move(kwargs);
  return prompt_text;
}

GenerationJob Api::new_job(Flavor flavor, const std::string& model) const {
  GenerationJob job;
  job.flavor = flavor;
  job.model = check_model(model);
  if (draining_) throw ApiError(503, "ServiceUnavailableError", "the server is shutting down");
  job.drain_expired = &drain_expired_;
  return job;
}

int Api::chat(const HttpRequest& req, ResponseWriter& w, GenerationRecord& record) {
  const json body = parse_json_body(req.body);  // the checks on any body (depth, numbers), first
  // Rendered from the body as sent (key order kept).
  const auto ordered = nlohmann::ordered_json::parse(req.body);
  GenerationJob job;
  job.flavor = Flavor::chat;
  return serve_chat(body, ordered, std::move(job), w, record);
}

int Api::responses(const HttpRequest& req, ResponseWriter& w, GenerationRecord& record) {
  (void)parse_json_body(req.body);
  ResponsesTranslation t = translate_responses_request(nlohmann::ordered_json::parse(req.body));
  GenerationJob job;
  job.flavor = Flavor::responses;
  job.responses_echo = std::move(t.echo);
  return serve_chat(json::parse(t.chat_body.dump()), t.chat_body, std::move(job), w, record);
}

int Api::serve_chat(const json& body, const nlohmann::ordered_json& ordered, GenerationJob job_in, ResponseWriter& w,
                    GenerationRecord& record) {
  ChatRequest r = parse_chat_request(body);
  GenerationJob job = new_job(job_in.flavor, r.gen.model);
  job.responses_echo = std::move(job_in.responses_echo);
  nlohmann::ordered_json kwargs;
  const std::string prompt_text = render_chat_prompt(r, ordered, &kwargs);
  refuse_certainly_too_long(seat_, prompt_text, "messages");  // truncation or not: a bound on tokenizing
  std::vector<int32_t> ids = seat_.tokenizer->encode(prompt_text, false);
  truncate_prompt(seat_, r.gen, ids);
  check_lengths(seat_, r.gen, ids.size(), "messages");
  job.prompts.push_back(std::move(ids));
  check_ids(seat_, r.gen.stop_token_ids, "stop_token_ids");
  check_ids(seat_, r.gen.allowed_token_ids, "allowed_token_ids");
  check_logit_bias(seat_, r.gen);
  refuse_what_no_parser_serves(seat_, r);
  if (r.echo) {
    std::string echoed = chat_echo_text(ordered["messages"], r.add_generation_prompt);
    if (!echoed.empty()) {
      r.gen.echo = true;
      r.gen.echo_scores_prompt = false;
      r.gen.echo_texts = {std::move(echoed)};
    }
  }
  ParserRequestInfo info;
  info.request_id = random_id("req-");
  info.tools_json = r.tools.is_null() ? "" : r.tools.dump();
  info.tool_choice_json = r.tool_choice.is_null() ? (r.tools.is_null() ? "" : "\"auto\"") : r.tool_choice.dump();
  info.response_format_json = r.response_format.is_null() ? "" : r.response_format.dump();
  info.chat_template_kwargs_json = kwargs.dump();
  info.prompt_tail = prompt_text.substr(prompt_text.size() > 256 ? prompt_text.size() - 256 : 0);
  info.parallel_tool_calls = r.parallel_tool_calls;
  job.parser = info;
  job.params = r.gen;
  return serve_generation(seat_, metrics_, job, w, &record);
}

int Api::completion(const HttpRequest& req, ResponseWriter& w, GenerationRecord& record) {
  CompletionRequest r = parse_completion_request(parse_json_body(req.body));
  GenerationJob job = new_job(Flavor::completion, r.gen.model);
  // Each prompt's n choices wait in the queue as requests of their own:
  // refused before any prompt is tokenized when the queue could never hold them.
  const auto choices = static_cast<int64_t>(r.prompts.size()) * r.gen.n;
  if (choices > seat_.max_queue && r.gen.n <= seat_.max_queue)  // 'n' alone too large: serve_generation names it
    throw bad_request(std::to_string(r.prompts.size()) + " prompts x 'n' " + std::to_string(r.gen.n) + " = " +
                          std::to_string(choices) + " choices, more than this seat's queue holds (server.max_queue = " +
                          std::to_string(seat_.max_queue) + ")",
                      "prompt");
  for (const auto& p : r.prompts) {
    std::vector<int32_t> ids;
    if (p.text) {
      refuse_certainly_too_long(seat_, *p.text, "prompt");
      ids = seat_.tokenizer->encode(*p.text, true);
    } else {
      check_ids(seat_, p.ids, "prompt");
      ids = p.ids;
    }
    const size_t sent_tokens = ids.size();
    truncate_prompt(seat_, r.gen, ids);
    check_lengths(seat_, r.gen, ids.size(), "prompt");
    // Echo: the prompt as sent, or as the tokenizer spells the ids it kept.
    if (r.gen.echo)
      r.gen.echo_texts.push_back(p.text && ids.size() == sent_tokens ? *p.text
                                                                     : seat_.tokenizer->decode(ids, r.gen.skip_special_tokens));
    job.prompts.push_back(std::move(ids));
  }
  check_ids(seat_, r.gen.stop_token_ids, "stop_token_ids");
  check_ids(seat_, r.gen.allowed_token_ids, "allowed_token_ids");
  check_logit_bias(seat_, r.gen);
  job.params = r.gen;
  return serve_generation(seat_, metrics_, job, w, &record);
}

int Api::tokenize(const HttpRequest& req, ResponseWriter& w) {
  const json body = parse_json_body(req.body);
  if (!body.is_object()) throw bad_request("the request body must be a JSON object");
  if (body.contains("model") && !body["model"].is_null()) {
    if (!body["model"].is_string()) throw bad_request("'model' must be a string", "model");
    check_model(body["model"].get<std::string>());
  }
  const auto flag = [&](const char* key, bool fallback) {
    if (!body.contains(key)) return fallback;
    if (!body[key].is_boolean()) throw bad_request(std::string("'") + key + "' must be a boolean", key);
    return body[key].get<bool>();
  };
  // The chat fields render the prompt exactly as the chat endpoint would.
  static const std::set<std::string> chat_fields{"messages", "tools", "tool_choice", "chat_template_kwargs",
                                                 "add_generation_prompt", "continue_final_message"};
  for (const auto& [key, value] : body.items())
    if (key != "model" && key != "prompt" && key != "add_special_tokens" && !chat_fields.count(key))
      throw bad_request("unknown field '" + key + "'", key);
  // A prompt is encoded with its special tokens by default (as
  // completions does), rendered messages without (the template wrote them);
  // add_special_tokens overrides either, as vLLM's /tokenize.
  bool add_special = flag("add_special_tokens", !body.contains("messages"));
  std::string text;
  if (body.contains("prompt")) {
    if (!body["prompt"].is_string()) throw bad_request("'prompt' must be a string", "prompt");
    for (const auto& key : chat_fields)
      if (body.contains(key))
        throw bad_request(key == "messages" ? std::string("send 'prompt' or 'messages', not both")
                                            : "'" + key + "' goes with 'messages', not 'prompt'",
                          key);
    text = body["prompt"].get<std::string>();
  } else if (body.contains("messages")) {
    json wrapped = {{"model", seat_.served_names.front()}};
    for (const auto& key : chat_fields)
      if (body.contains(key)) wrapped[key] = body[key];
    const ChatRequest r = parse_chat_request(wrapped);  // validates the chat fields
    nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(req.body);
    text = render_chat_prompt(r, ordered, nullptr);
  } else {
    throw bad_request("'prompt' or 'messages' is required", "prompt");
  }
  const auto ids = seat_.tokenizer->encode(text, add_special);
  w.send(200, "application/json",
         json_text(json{{"count", ids.size()}, {"max_model_len", seat_.max_model_len}, {"tokens", ids}}));
  return 200;
}

int Api::detokenize(const HttpRequest& req, ResponseWriter& w) {
  const json body = parse_json_body(req.body);
  if (!body.is_object()) throw bad_request("the request body must be a JSON object");
  for (const auto& [key, value] : body.items())  // as /tokenize: a typo is an error, not ignored
    if (key != "model" && key != "tokens") throw bad_request("unknown field '" + key + "'", key);
  if (body.contains("model") && !body["model"].is_null()) {
    if (!body["model"].is_string()) throw bad_request("'model' must be a string", "model");
    check_model(body["model"].get<std::string>());
  }
  if (!body.contains("tokens") || !body["tokens"].is_array()) throw bad_request("'tokens' must be an array of integers", "tokens");
  std::vector<int32_t> ids;
  for (const auto& t : body["tokens"]) {
    if (!t.is_number_integer()) throw bad_request("'tokens' must be an array of integers", "tokens");
    ids.push_back(token_id_of(t, "tokens"));
  }
  check_ids(seat_, ids, "tokens");
  w.send(200, "application/json", json_text(json{{"prompt", seat_.tokenizer->decode(ids, false)}}));
  return 200;
}

}  // namespace seatrt::server
