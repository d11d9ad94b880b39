#include "engine.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <span>
#include <string>
#include <unordered_map>

#include "batch_builder.hpp"
#include "host_sampler.hpp"

namespace seatrt::engine {

Engine::Engine(const EngineConfig& config, const KvPlan& plan, std::unique_ptr<ModelRunner> runner)
    : config_(config),
      kv_(plan, config.prefix_caching),
      scheduler_(config.scheduler, kv_),
      runner_(std::move(runner)),
      offload_(2, [this] {
        {
          std::lock_guard lock(mutex_);
          offload_done_ = true;
        }
        wake_.notify_all();
      }) {
  stats_.blocks_total = kv_.blocks_total();
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

SubmitStatus Engine::submit(GenerationRequest request, int64_t* id) {
  std::vector<GenerationRequest> one;
  one.push_back(std::move(request));
  std::vector<int64_t> ids;
  const SubmitStatus status = submit_all(std::move(one), &ids);
  if (status == SubmitStatus::accepted && id) *id = ids.front();
  return status;
}

SubmitStatus Engine::submit_all(std::vector<GenerationRequest> requests, std::vector<int64_t>* ids) {
  if (draining_) return SubmitStatus::draining;
  std::vector<SequencePtr> seqs;
  seqs.reserve(requests.size());
  for (auto& request : requests) {
    auto seq = std::make_shared<Sequence>();
    seq->prompt_len = static_cast<int64_t>(request.prompt.size());
    seq->tokens = request.prompt;
    seq->request = std::move(request);
    seqs.push_back(std::move(seq));
  }
  {
    std::lock_guard lock(mutex_);
    // Checked for the whole set: choices queued one at a time could each
    // fill the queue part-way and leave every request refused.
    if (stats_.waiting + static_cast<int64_t>(inbox_.size()) + static_cast<int64_t>(seqs.size()) >
        config_.scheduler.max_waiting)
      return SubmitStatus::queue_full;
    for (auto& seq : seqs) {
      seq->id = next_id_++;
      live_ids_.insert(seq->id);
      inbox_.push_back(seq);
    }
  }
  if (ids) {
    ids->clear();
    for (const auto& seq : seqs) ids->push_back(seq->id);
  }
  wake_.notify_all();
  return SubmitStatus::accepted;
}

void Engine::cancel(int64_t id) {
  {
    std::lock_guard lock(mutex_);
    if (!live_ids_.count(id)) return;
    cancels_.insert(id);
  }
  wake_.notify_all();
}

EngineStats Engine::stats() const {
  std::lock_guard lock(mutex_);
  EngineStats s = stats_;
  s.waiting += static_cast<int64_t>(inbox_.size());
  if (const int64_t started = step_started_ns_.load(); started != 0) {
    const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    s.step_running_s = static_cast<double>(now - started) * 1e-9;
  }
  return s;
}

bool Engine::idle() const {
  std::lock_guard lock(mutex_);
  return inbox_.empty() && live_ids_.empty();
}

namespace {

// Whether `mask` (bit i of word i/32) allows any token below `vocab`.
bool allows_any(const std::vector<uint32_t>& mask, size_t vocab) {
  for (size_t w = 0; w < mask.size() && w * 32 < vocab; ++w) {
    const size_t bits = std::min<size_t>(32, vocab - w * 32);
    const uint32_t valid = bits == 32 ? ~0u : ((1u << bits) - 1u);
    if (mask[w] & valid) return true;
  }
  return false;
}

// Narrows a row's mask (empty: every token allowed) to the request's
// allowed_token_ids and, before min_tokens are generated, takes its stop
// tokens out (vLLM's min_tokens).
void narrow_mask(const Sequence& seq, size_t vocab, std::vector<uint32_t>& mask) {
  const GenerationRequest& req = seq.request;
  const bool before_min = seq.generated() < req.min_tokens && !req.stop_token_ids.empty();
  if (req.allowed_token_ids.empty() && !before_min) return;
  const size_t words = (vocab + 31) / 32;
  if (mask.empty()) mask.assign(words, ~0u);
  auto in_range = [&](int32_t id) { return id >= 0 && static_cast<size_t>(id) < vocab && static_cast<size_t>(id) / 32 < mask.size(); };
  if (!req.allowed_token_ids.empty()) {
    std::vector<uint32_t> allowed(mask.size(), 0u);
    for (int32_t id : req.allowed_token_ids)
      if (in_range(id)) allowed[static_cast<size_t>(id) / 32] |= 1u << (id % 32);
    for (size_t w = 0; w < mask.size(); ++w) mask[w] &= allowed[w];
  }
  if (before_min)
    for (int32_t id : req.stop_token_ids)
      if (in_range(id)) mask[static_cast<size_t>(id) / 32] &= ~(1u << (id % 32));
}

}  // namespace

bool Engine::deliver_prompt_logprobs(const SequencePtr& seq) {
  Sequence& s = *seq;
  if (s.request.prompt_logprobs < 0 || s.prompt_events_sent) return true;
  if (static_cast<int64_t>(s.prompt_events.size()) < s.prompt_len - 1) return true;  // not all scored yet
  s.prompt_events_sent = true;
  if (!s.request.on_prompt_logprobs) return true;
  try {
    s.request.on_prompt_logprobs(std::move(s.prompt_events));
  } catch (const std::exception& e) {
    finish(seq, FinishReason::error, std::string("processing the prompt logprobs failed: ") + e.what());
    return false;
  } catch (...) {
    finish(seq, FinishReason::error, "processing the prompt logprobs failed: a non-standard exception");
    return false;
  }
  s.prompt_events.clear();
  return true;
}

void Engine::finish(const SequencePtr& seq, FinishReason reason, const std::string& error, TokenEvent stop_event) {
  if (seq->finished) return;  // one outcome per sequence, even if several rows of a step fail it
  if (seq->pending) {
    // Its parser is still busy on a pool thread: on_finish must come after
    // (resolve_offloaded finishes it).  The first reason asked for holds.
    if (!seq->deferred_finish) seq->deferred_finish = Sequence::DeferredFinish{reason, error, std::move(stop_event)};
    return;
  }
  seq->finished = true;
  scheduler_.remove(seq);
  const int64_t generated = seq->generated() + (stop_event.token >= 0 ? 1 : 0);
  FinishInfo info{reason, error, seq->prompt_len, generated, seq->cached_prompt_tokens, std::move(stop_event)};
  {
    // Published before the caller hears of the finish, so a client that
    // checks the pool right after its response sees its blocks freed.
    std::lock_guard lock(mutex_);
    live_ids_.erase(seq->id);
    stats_.blocks_used = kv_.blocks_used();
    stats_.running = static_cast<int64_t>(scheduler_.num_running());
    stats_.waiting = static_cast<int64_t>(scheduler_.num_waiting());
  }
  if (seq->request.on_finish) seq->request.on_finish(info);
}

void Engine::loop() {
  std::unordered_map<int64_t, SequencePtr> live;
  for (;;) {
    std::vector<SequencePtr> arrived;
    std::unordered_set<int64_t> cancelled;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] {
        return stop_ || !inbox_.empty() || !cancels_.empty() || scheduler_.num_running() > 0 ||
               scheduler_.num_waiting() > 0;
      });
      if (stop_) break;
      arrived.swap(inbox_);
      // Queued and counted under the same lock that submit() checks, so the
      // admission count never misses a request between the inbox and the
      // queue: a request submit() accepted is never refused later.
      for (auto& seq : arrived) scheduler_.enqueue(seq);
      stats_.waiting = static_cast<int64_t>(scheduler_.num_waiting());
      cancelled.swap(cancels_);
    }
    for (auto& seq : arrived) live.emplace(seq->id, seq);
    for (int64_t id : cancelled) {
      auto it = live.find(id);
      if (it == live.end()) continue;
      auto seq = it->second;
      live.erase(it);
      finish(seq, FinishReason::cancelled, "cancelled");
    }
    step_started_ns_ = std::chrono::steady_clock::now().time_since_epoch().count();
    const bool ran = step();
    step_started_ns_ = 0;
    if (!ran && !offloaded_.empty()) {
      // Every runnable sequence waits for its offloaded callback: sleep
      // until one is done (or new work or a cancel arrives), never spin.
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || offload_done_ || !inbox_.empty() || !cancels_.empty(); });
    }
    // Forget finished sequences.
    for (auto it = live.begin(); it != live.end();) {
      bool alive;
      {
        std::lock_guard lock(mutex_);
        alive = live_ids_.count(it->first) > 0;
      }
      it = alive ? std::next(it) : live.erase(it);
    }
  }
  // Shutting down: offloaded callbacks end first (a parser is never used by
  // two threads), then everything left finishes as cancelled.
  for (const auto& seq : offloaded_) {
    while (!seq->pending->done.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!seq->deferred_finish)  // one already due (length, error) keeps its outcome
      seq->deferred_finish = Sequence::DeferredFinish{FinishReason::cancelled, "the server is shutting down", {}};
  }
  resolve_offloaded();
  for (auto& [id, seq] : live) {
    if (seq->finished) continue;
    scheduler_.remove(seq);
    if (seq->request.on_finish)
      seq->request.on_finish({FinishReason::cancelled, "the server is shutting down", seq->prompt_len,
                              seq->generated(), seq->cached_prompt_tokens, {}});
  }
}

void Engine::offload_token(const SequencePtr& seq, const TokenEvent& event) {
  const bool at_length = seq->generated() >= seq->request.max_new_tokens ||
                         static_cast<int64_t>(seq->tokens.size()) >= config_.max_model_len;
  const GenerationRequest* req = &seq->request;  // outlives the task: `seq` is held by offloaded_
  seq->pending = offload_.run([req, event, at_length] {
    CallbackOutcome o;
    try {
      o.keep = !req->on_token || req->on_token(event);
    } catch (const std::exception& e) {
      o.error = std::string("processing the output failed: ") + e.what();
    } catch (...) {
      o.error = "processing the output failed: a non-standard exception";
    }
    if (o.error.empty() && o.keep && !at_length && req->allowed_mask) {  // the next step's mask, here too
      try {
        o.mask = req->allowed_mask();
        o.has_mask = true;
      } catch (const std::exception& e) {
        o.error = std::string("the output constraint failed: ") + e.what();
      } catch (...) {
        o.error = "the output constraint failed: its parser threw a non-standard exception";
      }
    }
    return o;
  });
  offloaded_.push_back(seq);
  if (at_length) finish(seq, FinishReason::length, "");  // deferred until the callback is done
}

void Engine::resolve_offloaded() {
  {
    std::lock_guard lock(mutex_);
    offload_done_ = false;
  }
  for (size_t i = 0; i < offloaded_.size();) {
    const SequencePtr seq = offloaded_[i];
    if (!seq->pending->done.load(std::memory_order_acquire)) {
      ++i;
      continue;
    }
    offloaded_.erase(offloaded_.begin() + static_cast<std::ptrdiff_t>(i));
    CallbackOutcome o = std::move(seq->pending->outcome);
    seq->pending.reset();
    auto deferred = std::move(seq->deferred_finish);
    seq->deferred_finish.reset();
    const bool cut = deferred && (deferred->reason == FinishReason::cancelled || deferred->reason == FinishReason::error);
    if (!o.error.empty()) {
      finish(seq, FinishReason::error, o.error);
    } else if (cut) {
      finish(seq, deferred->reason, deferred->error, std::move(deferred->stop_event));
    } else if (!o.keep) {
      finish(seq, FinishReason::stop, "");
    } else if (deferred) {
      finish(seq, deferred->reason, deferred->error, std::move(deferred->stop_event));
    } else if (o.has_mask) {
      seq->next_mask = std::move(o.mask);
    }
  }
}

bool Engine::step() {
  using Clock = std::chrono::steady_clock;
  // The step's time is published as it accrues, before any request of the
  // step hears its outcome: a client that reads the stats after its answer
  // sees the steps that made it, and step_seconds >= model_seconds holds at
  // every read.
  auto published_until = Clock::now();
  auto publish_time = [&](Clock::duration model_time, bool new_step) {
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    if (new_step) ++stats_.steps;
    stats_.model_seconds += std::chrono::duration<double>(model_time).count();
    stats_.step_seconds += std::chrono::duration<double>(now - published_until).count();
    published_until = now;
  };
  resolve_offloaded();
  StepPlan plan = scheduler_.schedule();
  if (plan.chunks.empty()) {
    if (scheduler_.num_running() == 0 && scheduler_.num_waiting() > 0) {
      // A sequence whose callback still runs is no such request: it waits.
      for (const auto& w : scheduler_.waiting())
        if (!w->pending) {
          finish(w, FinishReason::error, "the request does not fit in the KV pool even alone");
          break;
        }
    }
  } else {
    const auto& kvp = kv_.plan();
    StepBatch batch = build_step_batch(plan, kvp.block_size, kvp.full.has_value(), kvp.windowed.has_value());
    std::vector<float> logits;
    std::string error;
    Clock::duration forward_time{};
    try {
      const auto t = Clock::now();
      runner_->forward(batch, logits);
      forward_time = Clock::now() - t;
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {  // a plugin let a foreign exception cross the ABI
      error = "a plugin threw a non-standard exception";
    }
    publish_time(forward_time, true);
    if (!error.empty()) {  // counted for /ready; a step that succeeds (sampling too) resets it
      std::lock_guard lock(mutex_);
      ++stats_.failed_steps_in_a_row;
      stats_.last_step_error = error;
    }
    if (!error.empty()) {
      for (auto& c : plan.chunks)
        finish(c.seq, FinishReason::error, "the model's forward step failed: " + error);
    } else {
      // Pass 1: commit every chunk; collect one sampling input per logits row
      // (the constraint's mask is asked for now, after the previous token
      // reached the parser).  A chunk with logits at every position (prompt
      // logprobs) gives a scoring row per prompt token still to be scored:
      // greedy under a mask that allows only that token, so the sample op
      // returns its raw logprob and the top alternatives.
      const auto vocab = static_cast<size_t>(runner_->vocab_size());
      struct Row {
        ScheduledChunk* chunk = nullptr;
        std::vector<uint32_t> mask;
        bool failed = false;
        bool skip = false;       // a row no one reads (a position scored before a recompute)
        bool prompt_only = false;  // skipped: the prompt is all the request wants (max_new_tokens 0)
        int32_t scores = -1;     // >= 0: scores this prompt token (the sequence's prompt_events.size())
      };
      std::vector<Row> rows;
      const auto words = (vocab + 31) / 32;
      for (auto& c : plan.chunks) {
        Sequence& seq = *c.seq;
        const int64_t first = seq.num_computed;
        seq.num_computed += c.count;
        kv_.commit(seq);
        if (c.all_logits) {
          const int64_t last = c.needs_logits ? c.count - 1 : c.count;  // rows that are no sampling row
          int64_t next_target = static_cast<int64_t>(seq.prompt_events.size()) + 1;
          for (int64_t i = 0; i < last; ++i) {
            Row r;
            r.chunk = &c;
            const int64_t target_pos = first + i + 1;  // logits at position p score token p + 1
            const int32_t target =
                target_pos < seq.prompt_len ? seq.tokens[static_cast<size_t>(target_pos)] : -1;
            if (target >= 0 && static_cast<size_t>(target) >= vocab) {  // a tokenizer id past the model's logits
              r.skip = true;
              finish(c.seq, FinishReason::error, "prompt token " + std::to_string(target_pos) + " (id " +
                                                     std::to_string(target) + ") is outside the model's vocabulary of " +
                                                     std::to_string(vocab) + "; it cannot be scored");
            } else if (target_pos < seq.prompt_len && target_pos == next_target) {
              ++next_target;
              r.scores = target;
              r.mask.assign(words, 0u);
              r.mask[static_cast<size_t>(r.scores) / 32] |= 1u << (r.scores % 32);
            } else {
              r.skip = true;
            }
            rows.push_back(std::move(r));
          }
        }
        if (!c.needs_logits) continue;
        Row r;
        r.chunk = &c;
        if (seq.request.max_new_tokens <= 0) {  // the prompt alone (echo): nothing is drawn
          r.skip = true;
          r.prompt_only = true;
          rows.push_back(std::move(r));
          continue;
        }
        try {
          if (seq.next_mask) {  // computed by its offloaded callback (a slow parser)
            r.mask = std::move(*seq.next_mask);
            seq.next_mask.reset();
          } else if (seq.request.allowed_mask) {
            r.mask = seq.request.allowed_mask();
          }
        } catch (const std::exception& e) {
          finish(c.seq, FinishReason::error, std::string("the output constraint failed: ") + e.what());
          r.failed = true;
        } catch (...) {
          finish(c.seq, FinishReason::error, "the output constraint failed: its parser threw a non-standard exception");
          r.failed = true;
        }
        if (!r.failed) narrow_mask(seq, vocab, r.mask);
        // A mask that allows nothing fails its row alone: the sample op
        // refuses a whole batch for one such row.
        if (!r.failed && !r.mask.empty() && !allows_any(r.mask, vocab)) {
          finish(c.seq, FinishReason::error, "no token is allowed by the output constraint at output token " +
                                               std::to_string(seq.generated()));
          r.failed = true;
        }
        rows.push_back(std::move(r));
      }
      std::vector<SampleInput> inputs(rows.size());
      std::vector<SamplingParams> scoring(rows.size());  // the scoring rows' parameters
      for (size_t i = 0; i < rows.size(); ++i) {
        Sequence& seq = *rows[i].chunk->seq;
        SampleInput& in = inputs[i];
        // Empty when the logits stayed on the device (the runner samples there).
        if (logits.size() >= (i + 1) * vocab) in.logits = std::span<const float>(logits.data() + i * vocab, vocab);
        if (rows[i].skip || rows[i].scores >= 0) {
          SamplingParams& sp = scoring[i];
          sp.temperature = 0.0f;
          sp.num_top_logprobs = rows[i].skip ? 0 : seq.request.prompt_logprobs;
          in.params = &sp;
          in.allowed_mask = rows[i].mask;
          continue;
        }
        in.params = &seq.request.sampling;
        in.step = static_cast<uint64_t>(seq.generated());
        in.prompt_tokens = std::span<const int32_t>(seq.tokens.data(), static_cast<size_t>(seq.prompt_len));
        in.output_tokens = std::span<const int32_t>(seq.tokens.data() + seq.prompt_len,
                                                    static_cast<size_t>(seq.generated()));
        in.allowed_mask = rows[i].mask;
        // A row the sample op would refuse fails alone: the op refuses
        // the whole batch for one bad row, so the row's request ends here
        // and the row takes neutral parameters for the batch's call.
        if (!rows[i].failed) {
          const std::string problem = sampling_params_problem(*in.params, runner_->vocab_size());
          if (!problem.empty()) {
            finish(rows[i].chunk->seq, FinishReason::error, "invalid sampling parameters: " + problem);
            rows[i].failed = true;
          }
        }
        if (rows[i].failed) {
          static const SamplingParams neutral;
          in.params = &neutral;
          in.allowed_mask = {};
        }
      }
      // Pass 2: sample every row at once on the kernel provider; the host
      // sampler (same rule) serves providers without a sample op.
      std::vector<SampleResult> results;
      std::string sample_error;
      Clock::duration sample_time{};
      try {
        const auto t = Clock::now();
        const bool sampled = rows.empty() || runner_->sample(inputs, results);
        sample_time = Clock::now() - t;
        if (!sampled) {
          results.clear();
          for (size_t i = 0; i < rows.size(); ++i) {
            if (!rows[i].failed && inputs[i].logits.empty())
              throw std::logic_error("the model runner kept its logits on the device but cannot sample there");
            results.push_back(rows[i].failed ? SampleResult{} : sample_on_host(inputs[i]));
          }
        }
      } catch (const std::exception& e) {
        sample_error = e.what();
      } catch (...) {
        sample_error = "a plugin threw a non-standard exception";
      }
      publish_time(sample_time, false);
      {  // a step whose sampling failed failed too (/ready counts them)
        std::lock_guard lock(mutex_);
        stats_.failed_steps_in_a_row = sample_error.empty() ? 0 : stats_.failed_steps_in_a_row + 1;
        if (!sample_error.empty()) stats_.last_step_error = "sampling: " + sample_error;
      }
      // Pass 3: hand each token to its request (a sequence's prompt
      // logprobs first, once all are scored).
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].failed) continue;
        auto& c = *rows[i].chunk;
        Sequence& seq = *c.seq;
        if (seq.finished) continue;
        if (!sample_error.empty()) {
          finish(c.seq, FinishReason::error, "sampling failed: " + sample_error);
          continue;
        }
        const SampleResult& r = results[i];
        if (rows[i].skip) {
          if (rows[i].prompt_only && deliver_prompt_logprobs(c.seq)) finish(c.seq, FinishReason::length, "");
          continue;
        }
        if (r.non_finite) {
          {
            std::lock_guard lock(mutex_);  // counted before the request hears of it
            ++stats_.non_finite;
          }
          const std::string what = rows[i].scores >= 0
                                       ? "scoring prompt token " + std::to_string(seq.prompt_events.size() + 1)
                                       : "sampling output token " + std::to_string(seq.generated()) + " (position " +
                                             std::to_string(seq.tokens.size()) + ")";
          finish(c.seq, FinishReason::error,
                 "the model produced non-finite logits (NaN or infinity) when " + what + "; the seat is marked not ready");
          continue;
        }
        if (rows[i].scores >= 0) {
          seq.prompt_events.push_back(r.event);
          deliver_prompt_logprobs(c.seq);
          continue;
        }
        if (!deliver_prompt_logprobs(c.seq)) continue;
        if (r.event.token < 0) {
          finish(c.seq, FinishReason::error, "no token is allowed by the output constraint at output token " +
                                               std::to_string(seq.generated()));
          continue;
        }
        const auto& stops = seq.request.stop_token_ids;
        if (std::find(stops.begin(), stops.end(), r.event.token) != stops.end()) {
          finish(c.seq, FinishReason::stop, "", r.event);
          continue;
        }
        seq.tokens.push_back(r.event.token);
        if (seq.slow_callbacks) {  // its parser is slow: off the engine thread
          offload_token(c.seq, r.event);
          continue;
        }
        bool keep = true;
        const auto callback_start = std::chrono::steady_clock::now();
        try {
          keep = !seq.request.on_token || seq.request.on_token(r.event);
        } catch (const std::exception& e) {  // e.g. a parser plugin failed on this output
          finish(c.seq, FinishReason::error, std::string("processing the output failed: ") + e.what());
          continue;
        } catch (...) {
          finish(c.seq, FinishReason::error, "processing the output failed: a non-standard exception");
          continue;
        }
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - callback_start).count() >
            config_.slow_callback_s) {
          seq.slow_callbacks = true;  // its later callbacks leave the engine thread
          std::lock_guard lock(mutex_);
          ++stats_.slow_callback_sequences;
        }
        if (!keep) {
          finish(c.seq, FinishReason::stop, "");
        } else if (seq.generated() >= seq.request.max_new_tokens ||
                   static_cast<int64_t>(seq.tokens.size()) >= config_.max_model_len) {
          finish(c.seq, FinishReason::length, "");
        }
      }
    }
  }
  std::lock_guard lock(mutex_);
  stats_.waiting = static_cast<int64_t>(scheduler_.num_waiting());
  stats_.running = static_cast<int64_t>(scheduler_.num_running());
  stats_.blocks_used = kv_.blocks_used();
  stats_.blocks_total = kv_.blocks_total();
  stats_.preemptions += plan.preempted;
  if (!plan.chunks.empty()) stats_.step_seconds += std::chrono::duration<double>(Clock::now() - published_until).count();
  return !plan.chunks.empty();
}

}  // namespace seatrt::engine
