#include "serve_generation.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <random>

#include "api_error.hpp"
#include "json_text.hpp"
#include "generation.hpp"
#include "responses_output.hpp"

namespace seatrt::server {

// Insertion-ordered objects: a response reads in the order OpenAI writes it,
// and a completion's top_logprobs dict lists its tokens most likely first
// (a sorted map gave them alphabetically).
using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

std::string random_id(const std::string& prefix) {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += hex[rd() % 16];
  return id;
}

namespace {

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(int{c});
  return b;
}

// Accumulated state of one choice (non-streaming response, usage).
struct ChoiceState {
  std::string content;
  std::string reasoning;
  std::vector<ToolCallDelta> calls;  // merged per index
  json chat_logprobs = json::array();
  json completion_tokens = json::array();
  json completion_token_logprobs = json::array();
  json completion_top = json::array();
  json completion_offsets = json::array();  // text_offset of each token
  int64_t next_offset = 0;                  // characters of the token texts so far
  std::string finish_reason;
  json stop_reason;  // null, the stop string, or the stop token id
  std::string error;
  bool non_finite = false;
  int64_t completion_count = 0;
  bool finished = false;
  bool sent_role = false;
  std::optional<Clock::time_point> last_token;
};

// The legacy API's top_logprobs entry of one token: the likeliest first,
// and the sampled token always (OpenAI: "up to logprobs+1 elements").
json completion_top_entry(const TokenLogprob& lp) {
  json top = json::object();
  for (const auto& t : lp.top) top[t.token] = t.logprob;
  if (!top.contains(lp.token)) top[lp.token] = lp.logprob;
  return top;
}

// Characters (code points) of valid UTF-8 text, as Python's len() counts
// them: the legacy API's text_offset unit.
int64_t characters(const std::string& text) {
  int64_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

json chat_logprob_entries(const std::vector<TokenLogprob>& lps) {
  json out = json::array();
  for (const auto& lp : lps) {
    json top = json::array();
    for (const auto& t : lp.top) top.push_back({{"token", t.token}, {"logprob", t.logprob}, {"bytes", bytes_of(t.bytes)}});
    out.push_back({{"token", lp.token}, {"logprob", lp.logprob}, {"bytes", bytes_of(lp.bytes)}, {"top_logprobs", top}});
  }
  return out;
}

void merge_calls(std::vector<ToolCallDelta>& into, const std::vector<ToolCallDelta>& deltas) {
  for (const auto& d : deltas) {
    auto it = std::find_if(into.begin(), into.end(), [&](const ToolCallDelta& c) { return c.index == d.index; });
    if (it == into.end()) {
      into.push_back(d);
    } else {
      it->arguments += d.arguments;
    }
  }
}

json tool_calls_json(const std::vector<ToolCallDelta>& calls) {
  json out = json::array();
  for (const auto& c : calls)
    out.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  return out;
}

// Streamed tool-call deltas as OpenAI sends them: id, type and name only in
// a call's first delta, then index and argument pieces (clients such as the
// openai SDK's stream helper concatenate every string they are sent again).
// `started`: the indexes this choice had streamed before these deltas.
json tool_call_deltas_json(const std::vector<ToolCallDelta>& deltas, const std::vector<int32_t>& started) {
  json out = json::array();
  for (const auto& d : deltas) {
    json call = {{"index", d.index}};
    if (std::find(started.begin(), started.end(), d.index) == started.end()) {
      call["id"] = d.id;
      call["type"] = "function";
      call["function"] = {{"name", d.name}, {"arguments", d.arguments}};
    } else {
      call["function"] = {{"arguments", d.arguments}};
    }
    out.push_back(call);
  }
  return out;
}

json error_event(const std::string& message, bool non_finite) {
  return ApiError(500, non_finite ? "NonFiniteLogitsError" : "InternalServerError", message).to_json();
}

}  // namespace

int serve_generation(const SeatRuntime& seat, Metrics& metrics, const GenerationJob& job, ResponseWriter& writer,
                     GenerationRecord* record) {
  GenerationRecord unused;
  GenerationRecord& rec = record ? *record : unused;
  int64_t prompt_tokens = 0;  // every prompt once, however many choices it has
  for (const auto& p : job.prompts) prompt_tokens += static_cast<int64_t>(p.size());
  rec.prompt_tokens = prompt_tokens;
  rec.stream = job.params.stream;
  const bool chat = job.flavor == Flavor::chat;
  const bool responses = job.flavor == Flavor::responses;
  // Each choice waits in the queue as a request of its own: more than the
  // queue holds would get 429 however long the client retried.
  if (job.params.n > seat.max_queue)
    throw bad_request("'n' (" + std::to_string(job.params.n) + ") is more than this seat's queue holds "
                      "(server.max_queue = " + std::to_string(seat.max_queue) + ")",
                      "n");
  Generation gen(seat, job.params, job.prompts, job.parser ? &*job.parser : nullptr);
  switch (gen.start()) {
    case Generation::Submit::ok: break;
    case Generation::Submit::queue_full:
      writer.send(429, "application/json",
                  ApiError(429, "RateLimitError", "the server's queue is full; retry after " +
                                                      std::to_string(seat.retry_after_s) + " s").to_json().dump(),
                  {{"Retry-After", std::to_string(seat.retry_after_s)}});
      return 429;
    case Generation::Submit::draining:
      throw ApiError(503, "ServiceUnavailableError", "the server is shutting down");
  }
  const std::string id = random_id(responses ? "resp_" : chat ? "chatcmpl-" : "cmpl-");
  rec.id = id;
  const auto created = static_cast<int64_t>(std::time(nullptr));
  const auto n = job.prompts.size() * static_cast<size_t>(job.params.n);
  std::vector<ChoiceState> choices(n);
  const bool stream = job.params.stream;
  // Cached prompt tokens per prompt (the most any of its choices found),
  // summed like prompt_tokens.
  std::vector<int64_t> cached_per_prompt(job.prompts.size(), 0);
  int64_t cached_tokens = 0;

  auto usage = [&] {
    int64_t completion = 0;
    for (auto& c : choices) completion += c.completion_count;
    json u = {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion},
              {"total_tokens", prompt_tokens + completion}};
    // Always present, as OpenAI writes it (0 when nothing came from the cache).
    u["prompt_tokens_details"] = {{"cached_tokens", cached_tokens}};
    return u;
  };
  // A stream chunk; with include_usage its usage is null, or with
  // continuous_usage_stats the counts so far (vLLM's extension).
  auto chunk = [&](json choice_list) {
    json c = {{"id", id}, {"object", chat ? "chat.completion.chunk" : "text_completion"}, {"created", created},
              {"model", job.model}, {"choices", std::move(choice_list)}};
    if (job.params.include_usage) c["usage"] = job.params.continuous_usage ? usage() : json(nullptr);
    return c;
  };

  // The Responses API's output: items built from the parsed deltas, and
  // its own stream events (no chunks, no [DONE]).
  std::optional<ResponsesOutput> response_output;
  if (responses) {
    ResponsesOutput::Emit emit;
    if (stream)
      emit = [&writer](const std::string& type, const json& event) {
        return writer.write_named_event(type, json_text(event));
      };
    response_output.emplace(id, job.model, created, job.responses_echo, std::move(emit));
  }
  // A failure once the stream has begun: an error event (a failed response).
  auto stream_failure = [&](int status, const char* type, const std::string& message) {
    // The Responses API's error codes are a fixed set: "server_error" says it, the message says why.
    if (responses) return response_output->fail("server_error", message);
    return writer.write_event(json_text(ApiError(status, type, message).to_json()));
  };

  if (stream && !writer.start_events()) return 200;
  if (stream && responses && !response_output->start()) {
    gen.cancel();
    return 499;
  }
  bool gone = false;
  std::string failure;
  bool failure_non_finite = false;
  int failure_status = 500;
  size_t done = 0;
  // The deadline and the client's connection are checked every 50 ms, also
  // while tokens keep arriving: a fast stream must not outlive its timeout,
  // and a non-streaming client that left must not keep its sequence.
  constexpr auto kCheckEvery = std::chrono::milliseconds(50);
  auto next_check = Clock::now() + kCheckEvery;
  while (done < n) {
    auto ev = gen.next(kCheckEvery);
    if (const auto now = Clock::now(); now >= next_check) {
      next_check = now + kCheckEvery;
      if (job.drain_expired && *job.drain_expired) {
        gen.cancel();
        failure_status = 503;
        failure = "the server is shutting down: its drain_timeout_s (" + std::to_string(seat.drain_timeout_s) +
                  " s) passed before this request finished";
        if (stream) stream_failure(503, "ServiceUnavailableError", failure);
        break;
      }
      if (std::chrono::duration<double>(now - gen.start_time()).count() > seat.request_timeout_s) {
        gen.cancel();
        failure_status = 504;
        failure = "the request ran longer than the seat's request_timeout_s (" +
                  std::to_string(seat.request_timeout_s) + " s) and was cancelled";
        if (stream) stream_failure(504, "TimeoutError", failure);
        break;
      }
      if (writer.client_gone()) {
        gone = true;
        break;
      }
    }
    if (!ev) continue;
    auto& st = choices[static_cast<size_t>(ev->index)];
    st.completion_count = std::max(st.completion_count, ev->completion_tokens);
    const auto now = Clock::now();
    if (!ev->echo && (!ev->logprobs.empty() || !ev->delta.empty())) {  // an echoed prompt is no token
      if (!st.last_token) {
        metrics.observe_ttft(std::chrono::duration<double>(now - gen.start_time()).count());
      } else {
        metrics.observe_itl(std::chrono::duration<double>(now - *st.last_token).count());
      }
      st.last_token = now;
    }
    if (ev->finished) {
      ++done;
      st.finished = true;
      st.completion_count = ev->completion_tokens;
      auto& cached = cached_per_prompt[static_cast<size_t>(ev->index) / static_cast<size_t>(job.params.n)];
      cached = std::max(cached, ev->cached_tokens);
      cached_tokens = 0;
      for (int64_t c : cached_per_prompt) cached_tokens += c;
      if (!ev->error.empty()) {
        st.error = ev->error;
        st.non_finite = ev->non_finite;
        if (failure.empty()) {
          failure = ev->error;
          failure_non_finite = ev->non_finite;
        }
      } else {
        st.finish_reason = ev->finish_reason;
        st.stop_reason = ev->stop_string ? json(*ev->stop_string) : ev->stop_token >= 0 ? json(ev->stop_token) : json();
      }
    }
    st.content += ev->delta.content;
    st.reasoning += ev->delta.reasoning;
    std::vector<int32_t> started;
    for (const auto& c : st.calls) started.push_back(c.index);
    merge_calls(st.calls, ev->delta.tool_calls);
    if (responses) {
      if (failure.empty() &&
          !response_output->add(ev->delta, job.params.logprobs ? chat_logprob_entries(ev->logprobs) : json::array(),
                                ev->completion_tokens, ev->finished && ev->finish_reason == "length")) {
        gone = true;
        break;
      }
      if (stream && !failure.empty()) {
        stream_failure(500, failure_non_finite ? "NonFiniteLogitsError" : "InternalServerError", failure);
        break;
      }
      continue;
    }
    if (chat) {
      if (job.params.logprobs)
        for (auto& e : chat_logprob_entries(ev->logprobs)) st.chat_logprobs.push_back(e);
    } else {
      for (const auto& lp : ev->logprobs) {
        st.completion_tokens.push_back(lp.token);
        st.completion_offsets.push_back(st.next_offset);
        st.next_offset += characters(lp.text);
        st.completion_token_logprobs.push_back(lp.has_logprob ? json(lp.logprob) : json(nullptr));
        st.completion_top.push_back(lp.has_logprob ? completion_top_entry(lp) : json(nullptr));
      }
    }
    if (!stream) continue;
    if (!failure.empty()) {
      writer.write_event(json_text(error_event(failure, failure_non_finite)));
      break;
    }
    // One chunk per event.
    json choice = {{"index", ev->index}};
    json logprobs = nullptr;
    if (chat) {
      json delta = json::object();
      if (!st.sent_role) {
        delta["role"] = "assistant";
        st.sent_role = true;
      }
      if (!ev->delta.content.empty() || delta.contains("role")) delta["content"] = ev->delta.content;
      // Reasoning under vLLM's current name and its earlier one, which
      // several clients still read (shared/spec gemma4-text-boundary 4.6).
      if (!ev->delta.reasoning.empty()) {
        delta["reasoning"] = ev->delta.reasoning;
        delta["reasoning_content"] = ev->delta.reasoning;
      }
      if (!ev->delta.tool_calls.empty()) delta["tool_calls"] = tool_call_deltas_json(ev->delta.tool_calls, started);
      choice["delta"] = delta;
      if (job.params.logprobs && !ev->logprobs.empty()) logprobs = {{"content", chat_logprob_entries(ev->logprobs)}};
    } else {
      choice["text"] = ev->delta.content;
      if (job.params.logprobs && !ev->logprobs.empty()) {
        json toks = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
        // This event's offsets: the choice's running count already includes
        // its tokens (added above), so they are recounted from where it began.
        int64_t offset = st.next_offset;
        for (const auto& lp : ev->logprobs) offset -= characters(lp.text);
        for (const auto& lp : ev->logprobs) {
          offsets.push_back(offset);
          offset += characters(lp.text);
          toks.push_back(lp.token);
          lps.push_back(lp.has_logprob ? json(lp.logprob) : json(nullptr));
          tops.push_back(lp.has_logprob ? completion_top_entry(lp) : json(nullptr));
        }
        logprobs = {{"tokens", toks}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
      }
    }
    choice["logprobs"] = logprobs;
    choice["finish_reason"] = ev->finished ? json(st.finish_reason) : json(nullptr);
    if (ev->finished) choice["stop_reason"] = st.stop_reason;
    const bool has_payload = ev->finished || !ev->delta.empty() || !logprobs.is_null() ||
                             (chat && choice["delta"].contains("role"));
    if (has_payload && !writer.write_event(json_text(chunk(json::array({choice}))))) {
      gone = true;
      break;
    }
  }
  // The access log's view of the outcome (also for a client that left).
  for (auto& c : choices) {
    rec.completion_tokens += c.completion_count;
    if (c.finished) rec.finish.push_back(c.finish_reason);
  }
  rec.cached_tokens = cached_tokens;
  rec.error = failure;
  // Work done counts whoever stayed to see it.
  metrics.add_tokens(prompt_tokens, rec.completion_tokens);
  if (gone) {
    gen.cancel();
    return 499;  // client closed the request
  }

  if (stream && responses) {
    if (failure.empty()) response_output->finish(choices[0].finish_reason, usage());
    writer.end_events();
    return failure.empty() ? 200 : failure_status;
  }
  if (stream) {
    if (failure.empty() && job.params.include_usage) {
      json last = chunk(json::array());
      last["usage"] = usage();
      writer.write_event(json_text(last));
    }
    writer.write_event("[DONE]");
    writer.end_events();
    return failure.empty() ? 200 : failure_status;
  }
  if (!failure.empty()) {
    const std::string body =
        failure_status == 504   ? json_text(ApiError(504, "TimeoutError", failure).to_json())
        : failure_status == 503 ? json_text(ApiError(503, "ServiceUnavailableError", failure).to_json())
                                : json_text(error_event(failure, failure_non_finite));
    writer.send(failure_status, "application/json", body);
    return failure_status;
  }
  if (responses) {
    response_output->finish(choices[0].finish_reason, usage());
    writer.send(200, "application/json", json_text(response_output->response()));
    return 200;
  }
  json list = json::array();
  for (size_t i = 0; i < n; ++i) {
    auto& st = choices[i];
    json c = {{"index", i}, {"finish_reason", st.finish_reason}, {"stop_reason", st.stop_reason}};
    if (chat) {
      json message = {{"role", "assistant"}};
      message["content"] = st.content.empty() && !st.calls.empty() ? json(nullptr) : json(st.content);
      if (!st.reasoning.empty()) {
        message["reasoning"] = st.reasoning;
        message["reasoning_content"] = st.reasoning;
      }
      if (!st.calls.empty()) message["tool_calls"] = tool_calls_json(st.calls);
      c["message"] = message;
      c["logprobs"] = job.params.logprobs ? json{{"content", st.chat_logprobs}} : json(nullptr);
    } else {
      c["text"] = st.content;
      c["logprobs"] = job.params.logprobs ? json{{"tokens", st.completion_tokens},
                                                 {"token_logprobs", st.completion_token_logprobs},
                                                 {"top_logprobs", st.completion_top},
                                                 {"text_offset", st.completion_offsets}}
                                          : json(nullptr);
    }
    list.push_back(c);
  }
  json body = {{"id", id}, {"object", chat ? "chat.completion" : "text_completion"}, {"created", created},
               {"model", job.model}, {"choices", list}, {"usage", usage()}};
  writer.send(200, "application/json", json_text(body));
  return 200;
}

}  // namespace seatrt::server
