#include "generation.hpp"

#include <random>

#include "seatrt/text/detokenizer.hpp"

namespace seatrt::server {

struct Generation::Choice {
  int32_t index = 0;
  size_t prompt = 0;  // into prompts_
  Generation* owner = nullptr;
  text::StreamingDetokenizer detok;
  text::StopStringMatcher stops;            // on the content
  text::StopStringMatcher reasoning_stops;  // on the reasoning: stop strings end a thought too
  std::unique_ptr<ParserChain> parser;
  int64_t completion_tokens = 0;
  int stop_index = -1;  // the request's stop string that ended the output, if one did

  Choice(const SeatRuntime& seat, const GenerationParams& p, bool has_parser)
      : detok(*seat.tokenizer, has_parser ? false : p.skip_special_tokens), stops(p.stop), reasoning_stops(p.stop) {}
};

namespace {

std::string finish_name(int32_t reason) {
  switch (reason) {
    case SEATRT_FINISH_LENGTH: return "length";
    case SEATRT_FINISH_TOOL_CALLS: return "tool_calls";
    default: return "stop";
  }
}

}  // namespace

Generation::Generation(const SeatRuntime& seat, const GenerationParams& params,
                       std::vector<std::vector<int32_t>> prompts, const ParserRequestInfo* parser_info)
    : seat_(seat), params_(params), prompts_(std::move(prompts)), start_time_(std::chrono::steady_clock::now()) {
  const bool has_parser = parser_info && (seat.tool_parser.api || seat.reasoning_parser.api);
  for (size_t p = 0; p < prompts_.size(); ++p)
    for (int32_t j = 0; j < params.n; ++j) {
      auto c = std::make_unique<Choice>(seat, params, has_parser);
      c->index = static_cast<int32_t>(choices_.size());
      c->prompt = p;
      c->owner = this;
      if (has_parser) c->parser = std::make_unique<ParserChain>(seat, *parser_info);
      choices_.push_back(std::move(c));
    }
}


Generation::~Generation() {
  cancel();
  std::unique_lock lock(mutex_);
  // Accepted sequences always finish (the engine reports cancellation), so
  // no engine callback can outlive this object.
  ready_.wait(lock, [&] { return finished_ >= static_cast<int32_t>(engine_ids_.size()); });
}

LogprobToken Generation::logprob_token(int32_t id, float logprob) const {
  const int32_t one[1] = {id};
  std::string text = seat_.tokenizer->decode(one, false);
  std::string token = params_.tokens_as_ids ? "token_id:" + std::to_string(id) : text;
  return {std::move(token), std::string(seat_.tokenizer->token_bytes(id)), logprob, std::move(text)};
}

TokenLogprob Generation::token_logprob(const engine::TokenEvent& e, int32_t top_n) const {
  TokenLogprob lp;
  static_cast<LogprobToken&>(lp) = logprob_token(e.token, e.logprob);
  for (size_t i = 0; i < e.top_ids.size() && static_cast<int32_t>(i) < top_n; ++i)
    lp.top.push_back(logprob_token(e.top_ids[i], e.top_logprobs[i]));
  return lp;
}

std::string Generation::with_stop(std::string text, int stop_index) const {
  if (stop_index >= 0 && params_.include_stop_str && stop_index < static_cast<int>(params_.stop.size()))
    text += params_.stop[static_cast<size_t>(stop_index)];
  return text;
}

ChoiceEvent Generation::echo_event(const Choice& choice) const {
  ChoiceEvent ev;
  ev.index = choice.index;
  ev.echo = true;
  if (choice.prompt < params_.echo_texts.size()) ev.delta.content = params_.echo_texts[choice.prompt];
  return ev;
}

void Generation::push(ChoiceEvent event) {
  {
    std::lock_guard lock(mutex_);
    if (event.finished) ++finished_;
    events_.push_back(std::move(event));
  }
  ready_.notify_all();
}

Generation::Submit Generation::start() {
  std::random_device os_random;
  std::vector<engine::GenerationRequest> requests;
  for (auto& c : choices_) {
    Choice* choice = c.get();
    const std::vector<int32_t>& prompt = prompts_[choice->prompt];
    engine::GenerationRequest req;
    req.prompt = prompt;
    req.max_new_tokens = params_.max_tokens ? *params_.max_tokens
                                            : seat_.max_model_len - static_cast<int64_t>(prompt.size());
    req.sampling = params_.sampling;
    req.sampling.num_top_logprobs = params_.logprobs ? std::max(params_.top_logprobs, 1) : 0;
    // Choice j of each prompt takes seed + j, as vLLM (each prompt is a request of its own there), so a
    // prompt's answers do not depend on the prompts sent beside it.
    req.sampling.seed = params_.seeded ? params_.sampling.seed + static_cast<uint64_t>(choice->index % params_.n)
                                       : (uint64_t{os_random()} << 32) ^ os_random();
    // ignore_eos (vLLM): the seat's end tokens do not stop it; the request's own stop_token_ids still do.
    if (!params_.ignore_eos) req.stop_token_ids = seat_.end_token_ids;
    req.min_tokens = params_.min_tokens;
    req.allowed_token_ids = params_.allowed_token_ids;
    req.stop_token_ids.insert(req.stop_token_ids.end(), params_.stop_token_ids.begin(), params_.stop_token_ids.end());
    if (choice->parser) req.allowed_mask = [choice] { return choice->parser->allowed_mask(); };
    const bool want_logprobs = params_.logprobs;
    const int32_t top_n = params_.top_logprobs;
    if (params_.echo && want_logprobs && params_.echo_scores_prompt) {
      // The echoed prompt comes with its tokens' logprobs once the engine
      // has scored them (before the first generated token).
      req.prompt_logprobs = top_n;
      req.on_prompt_logprobs = [this, choice, top_n](std::vector<engine::TokenEvent> events) {
        ChoiceEvent ev = echo_event(*choice);
        // Spelling (1 + top_n) tokens per prompt token is left to the
        // reader's thread (next()), not the engine's: a long prompt would
        // hold every other request's step.
        ev.complete = [this, choice, top_n, events = std::move(events)](ChoiceEvent& out) {
          const std::vector<int32_t>& scored = prompts_[choice->prompt];
          if (!scored.empty()) {  // the first token has nothing before it: null
            TokenLogprob first;
            static_cast<LogprobToken&>(first) = logprob_token(scored.front(), 0.0f);
            first.has_logprob = false;
            out.logprobs.push_back(std::move(first));
          }
          for (const auto& e : events) out.logprobs.push_back(token_logprob(e, top_n));
        };
        push(std::move(ev));
      };
    } else if (params_.echo) {
      push(echo_event(*choice));
    }
    req.on_token = [this, choice, want_logprobs, top_n](const engine::TokenEvent& e) {
      ChoiceEvent ev;
      ev.index = choice->index;
      ++choice->completion_tokens;
      ev.completion_tokens = choice->completion_tokens;  // a client that leaves is logged with them
      if (want_logprobs) ev.logprobs.push_back(token_logprob(e, top_n));
      bool keep = true;
      // vLLM's min_tokens: no stop string ends the output before that many
      // tokens (text before then is not searched for one).
      const bool stops_on = choice->completion_tokens >= params_.min_tokens;
      if (choice->parser) {
        // The parser sees every token at once, as raw bytes (it holds back
        // incomplete UTF-8 itself): its allowed-token mask for the next step
        // must account for the whole output so far.  Stop strings then apply
        // to the reasoning and the content it emits (vLLM matches them on
        // the whole output, a thought included).
        const std::string_view bytes = seat_.tokenizer->token_bytes(e.token);
        ev.delta = choice->parser->feed({e.token}, std::string(bytes));
        if (!ev.delta.reasoning.empty() && stops_on) {
          auto r = choice->reasoning_stops.push(ev.delta.reasoning);
          ev.delta.reasoning = with_stop(std::move(r.text), r.stop_index);
          if (r.stop_index >= 0) {
            keep = false;
            choice->stop_index = r.stop_index;
            ev.delta.content.clear();  // what came after the stop
            ev.delta.tool_calls.clear();
          }
        }
        if (keep && (!ev.delta.content.empty() || !ev.delta.tool_calls.empty())) {
          // The thought has ended: a tail held as a possible stop is not one.
          ev.delta.reasoning += choice->reasoning_stops.finish();
        }
        if (keep && !ev.delta.content.empty() && stops_on) {
          auto r = choice->stops.push(ev.delta.content);
          keep = r.stop_index < 0;
          if (!keep) choice->stop_index = r.stop_index;
          ev.delta.content = with_stop(std::move(r.text), r.stop_index);
        }
      } else {
        std::string piece = choice->detok.push(e.token);
        // A byte run is held until it ends (the detokenizer's rule), but
        // one that already spells a stop string ends the output at this
        // token, as it would for any other token: flushed here, the run is
        // exactly what decoding these tokens gives.
        if (piece.empty() && stops_on && choice->stops.would_stop(choice->detok.held_complete_text()))
          piece = choice->detok.finish();
        if (!piece.empty() && !stops_on) {
          ev.delta.content = piece;
        } else if (!piece.empty()) {
          auto r = choice->stops.push(piece);
          keep = r.stop_index < 0;
          if (!keep) choice->stop_index = r.stop_index;
          ev.delta.content = with_stop(std::move(r.text), r.stop_index);
        }
      }
      if (!ev.delta.empty() || !ev.logprobs.empty()) push(std::move(ev));
      return keep;
    };
    req.on_finish = [this, choice, want_logprobs, top_n](const engine::FinishInfo& info) {
      ChoiceEvent ev;
      ev.index = choice->index;
      ev.finished = true;
      ev.prompt_tokens = info.prompt_tokens;
      const engine::TokenEvent& stop = info.stop_event;
      if (stop.token >= 0) {
        // The end or stop token was sampled: it counts, and has a logprob,
        // as vLLM reports it; its text is never part of the output.
        ++choice->completion_tokens;
        if (want_logprobs) ev.logprobs.push_back(token_logprob(stop, top_n));
      }
      ev.completion_tokens = choice->completion_tokens;
      ev.cached_tokens = info.cached_prompt_tokens;
      if (info.reason == engine::FinishReason::error || info.reason == engine::FinishReason::cancelled) {
        ev.error = info.error.empty() ? "cancelled" : info.error;
        ev.non_finite = info.error.find("non-finite") != std::string::npos;
        push(std::move(ev));
        return;
      }
      try {
        // Text still held back: the parser's (flushed by finish) or the
        // detokenizer's, then whatever the stop-string matcher kept.
        auto flush_through_stops = [&](const std::string& tail) {
          if (choice->stops.stopped()) return std::string();
          auto r = choice->stops.push(tail);
          if (r.stop_index >= 0) choice->stop_index = r.stop_index;
          return with_stop(std::move(r.text), r.stop_index) + (r.stop_index < 0 ? choice->stops.finish() : "");
        };
        int32_t reason = info.reason == engine::FinishReason::length ? SEATRT_FINISH_LENGTH : SEATRT_FINISH_STOP;
        if (choice->parser) {
          ParsedDelta f = choice->parser->finish(reason, &reason);
          if (!choice->reasoning_stops.stopped()) {
            auto r = choice->reasoning_stops.push(f.reasoning);
            if (r.stop_index >= 0) choice->stop_index = r.stop_index;
            f.reasoning = with_stop(std::move(r.text), r.stop_index) + (r.stop_index < 0 ? choice->reasoning_stops.finish() : "");
          } else {
            f.reasoning.clear();
          }
          // A thought cut off is also the content (the parser's rule); cut
          // by a stop string, its copy ends at the stop as well.
          f.content = flush_through_stops(f.content);
          ev.delta = std::move(f);
        } else {
          ev.delta.content = flush_through_stops(choice->detok.finish());
        }
        // A stop string completed by the text flushed at the end is a stop,
        // whatever ended the tokens (max_tokens on the stop's last token).
        if (choice->stop_index >= 0 && reason == SEATRT_FINISH_LENGTH) reason = SEATRT_FINISH_STOP;
        ev.finish_reason = finish_name(reason);
        if (choice->stop_index >= 0 && choice->stop_index < static_cast<int>(params_.stop.size()))
          ev.stop_string = params_.stop[static_cast<size_t>(choice->stop_index)];
        else if (stop.token >= 0 && stop.token != seat_.tokenizer->eos_id())
          ev.stop_token = stop.token;
      } catch (const std::exception& e) {
        ev.error = std::string("output parsing failed: ") + e.what();
      }
      push(std::move(ev));
    };
    requests.push_back(std::move(req));
  }
  // All the choices queue at once or none does (Engine::submit_all).
  std::vector<int64_t> ids;
  const auto status = seat_.engine->submit_all(std::move(requests), &ids);
  if (status != engine::SubmitStatus::accepted)
    return status == engine::SubmitStatus::queue_full ? Submit::queue_full : Submit::draining;
  std::lock_guard lock(mutex_);
  engine_ids_ = std::move(ids);
  return Submit::ok;
}

std::optional<ChoiceEvent> Generation::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
  ChoiceEvent e = std::move(events_.front());
  events_.pop_front();
  lock.unlock();
  if (e.complete) {  // work the engine thread left to the reader
    auto complete = std::move(e.complete);
    e.complete = nullptr;
    complete(e);
  }
  return e;
}

bool Generation::all_finished() const {
  std::lock_guard lock(mutex_);
  return events_.empty() && finished_ >= static_cast<int32_t>(choices_.size());
}

void Generation::cancel() {
  std::vector<int64_t> ids;
  {
    std::lock_guard lock(mutex_);
    ids = engine_ids_;
  }
  for (int64_t id : ids) seat_.engine->cancel(id);
}

}  // namespace seatrt::server
