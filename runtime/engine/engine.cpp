#include <chrono>
#include "engine.hpp"

#include <algorithm>
#include <exception>
#include <span>
#include <string>
#include <unordered_map>

#include "batch_builder.hpp"
#include "host_sampler.hpp"

namespace seatrt::engine {

Engine::Engine(const EngineConfig& config, const KvPlan& plan, std::unique_ptr<ModelRunner> runner)
    : config_(config), kv_(plan, config.prefix_caching), scheduler_(config.scheduler, kv_), runner_(std::move(runner)) {
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
  if (draining_) return SubmitStatus::draining;
  auto seq = std::make_shared<Sequence>();
  seq->prompt_len = static_cast<int64_t>(request.prompt.size());
  seq->tokens = request.prompt;
  seq->request = std::move(request);
  {
    std::lock_guard lock(mutex_);
    if (stats_.waiting + static_cast<int64_t>(inbox_.size()) >= config_.scheduler.max_waiting)
      return SubmitStatus::queue_full;
    seq->id = next_id_++;
    live_ids_.insert(seq->id);
    inbox_.push_back(seq);
  }
  if (id) *id = seq->id;
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

}  // namespace

void Engine::finish(const SequencePtr& seq, FinishReason reason, const std::string& error, TokenEvent stop_event) {
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
    step();
    step_started_ns_ = 0;
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
  // Shutting down: everything left finishes as cancelled.
  for (auto& [id, seq] : live) {
    scheduler_.remove(seq);
    if (seq->request.on_finish)
      seq->request.on_finish({FinishReason::cancelled, "the server is shutting down", seq->prompt_len,
                              seq->generated(), seq->cached_prompt_tokens, {}});
  }
}

void Engine::step() {
  StepPlan plan = scheduler_.schedule();
  if (plan.chunks.empty()) {
    if (scheduler_.num_running() == 0 && scheduler_.num_waiting() > 0) {
      // Cannot happen with a validated plan; never spin on it.
      finish(scheduler_.waiting().front(), FinishReason::error,
           "the request does not fit in the KV pool even alone");
    }
  } else {
    const auto& kvp = kv_.plan();
    StepBatch batch = build_step_batch(plan, kvp.block_size, kvp.full.has_value(), kvp.windowed.has_value());
    std::vector<float> logits;
    std::string error;
    try {
      runner_->forward(batch, logits);
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {  // a plugin let a foreign exception cross the ABI
      error = "a plugin threw a non-standard exception";
    }
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
      // reached the parser).
      const auto vocab = static_cast<size_t>(runner_->vocab_size());
      struct Row {
        ScheduledChunk* chunk = nullptr;
        std::vector<uint32_t> mask;
        bool failed = false;
      };
      std::vector<Row> rows;
      for (auto& c : plan.chunks) {
        Sequence& seq = *c.seq;
        seq.num_computed += c.count;
        kv_.commit(seq);
        if (!c.needs_logits) continue;
        Row r;
        r.chunk = &c;
        try {
          if (seq.request.allowed_mask) r.mask = seq.request.allowed_mask();
        } catch (const std::exception& e) {
          finish(c.seq, FinishReason::error, std::string("the output constraint failed: ") + e.what());
          r.failed = true;
        } catch (...) {
          finish(c.seq, FinishReason::error, "the output constraint failed: its parser threw a non-standard exception");
          r.failed = true;
        }
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
      for (size_t i = 0; i < rows.size(); ++i) {
        Sequence& seq = *rows[i].chunk->seq;
        SampleInput& in = inputs[i];
        // Empty when the logits stayed on the device (the runner samples there).
        if (logits.size() >= (i + 1) * vocab) in.logits = std::span<const float>(logits.data() + i * vocab, vocab);
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
          const std::string problem = sampling_params_problem(*in.params);
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
      try {
        if (!rows.empty() && !runner_->sample(inputs, results)) {
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
      {  // a step whose sampling failed failed too (/ready counts them)
        std::lock_guard lock(mutex_);
        stats_.failed_steps_in_a_row = sample_error.empty() ? 0 : stats_.failed_steps_in_a_row + 1;
        if (!sample_error.empty()) stats_.last_step_error = "sampling: " + sample_error;
      }
      // Pass 3: hand each token to its request.
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].failed) continue;
        auto& c = *rows[i].chunk;
        Sequence& seq = *c.seq;
        if (!sample_error.empty()) {
          finish(c.seq, FinishReason::error, "sampling failed: " + sample_error);
          continue;
        }
        const SampleResult& r = results[i];
        if (r.non_finite) {
          {
            std::lock_guard lock(mutex_);  // counted before the request hears of it
            ++stats_.non_finite;
          }
          finish(c.seq, FinishReason::error,
               "the model produced non-finite logits (NaN or infinity) when sampling output token " +
                   std::to_string(seq.generated()) + " (position " + std::to_string(seq.tokens.size()) +
                   "); the seat is marked not ready");
          continue;
        }
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
        bool keep = true;
        try {
          keep = !seq.request.on_token || seq.request.on_token(r.event);
        } catch (const std::exception& e) {  // e.g. a parser plugin failed on this output
          finish(c.seq, FinishReason::error, std::string("processing the output failed: ") + e.what());
          continue;
        } catch (...) {
          finish(c.seq, FinishReason::error, "processing the output failed: a non-standard exception");
          continue;
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
  if (!plan.chunks.empty()) ++stats_.steps;
}

}  // namespace seatrt::engine
