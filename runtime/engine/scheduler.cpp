#include "scheduler.hpp"

#include <algorithm>
#include <cstdint>

namespace seatrt::engine {

Scheduler::Scheduler(const SchedulerConfig& config, KvManager& kv) : config_(config), kv_(kv) {}

void Scheduler::enqueue(SequencePtr seq) { waiting_.push_back(std::move(seq)); }

void Scheduler::preempt(const SequencePtr& seq) {
  kv_.free(*seq);
  ++seq->preemptions;
  running_.erase(std::find(running_.begin(), running_.end(), seq));
  waiting_.push_front(seq);
}

void Scheduler::remove(const SequencePtr& seq) {
  kv_.free(*seq);
  if (auto it = std::find(running_.begin(), running_.end(), seq); it != running_.end()) running_.erase(it);
  if (auto it = std::find(waiting_.begin(), waiting_.end(), seq); it != waiting_.end()) waiting_.erase(it);
}

StepPlan Scheduler::schedule() {
  StepPlan plan;
  int64_t budget = config_.max_num_batched_tokens;
  auto add = [&](const SequencePtr& seq, int64_t n) {
    const int64_t len = static_cast<int64_t>(seq->tokens.size());
    plan.chunks.push_back({seq, seq->num_computed, n, seq->num_computed + n == len, seq->wants_prompt_logits()});
    plan.num_tokens += n;
    budget -= n;
  };

  // Running sequences, oldest first; the youngest make room when short.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    SequencePtr seq = running_[i];
    if (seq->pending) {  // its output callback still runs off the engine thread: not this step
      ++i;
      continue;
    }
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(seq->tokens.size()) - seq->num_computed, budget);
    bool self_preempted = false;
    while (!kv_.allocate(*seq, n)) {
      SequencePtr victim = running_.back();
      preempt(victim);
      ++plan.preempted;
      if (victim == seq) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) break;
    add(seq, n);
    ++i;
  }

  // Admit waiting sequences (FCFS) while there is room; not in a step that
  // had to preempt, so a preempted sequence is not re-admitted at once.
  for (size_t w = 0; plan.preempted == 0 && budget > 0 && w < waiting_.size() &&
                     static_cast<int32_t>(running_.size()) < config_.max_num_seqs;) {
    SequencePtr seq = waiting_[w];
    if (seq->pending) {  // preempted while its callback runs: admitted once it is done; the others go on
      ++w;
      continue;
    }
    if (seq->num_computed == 0 && seq->full_blocks.empty() && seq->window_blocks.empty() &&
        seq->request.prompt_logprobs < 0)
      kv_.match_prefix(*seq);
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(seq->tokens.size()) - seq->num_computed, budget);
    if (!kv_.allocate(*seq, n)) {
      kv_.free(*seq);
      break;
    }
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(w));
    running_.push_back(seq);
    add(seq, n);
  }
  fit_logits_rows(plan);
  return plan;
}

// Cuts chunks that want logits at every position, the last first, until
// the step's rows fit: each keeps at least one token (one row), and every
// chunk has at most one row otherwise, so max_num_seqs rows always fit.
// The blocks allocated for the cut tokens stay with the sequence: its next
// step computes them.
void Scheduler::fit_logits_rows(StepPlan& plan) const {
  const int64_t limit = config_.max_logits_rows > 0 ? config_.max_logits_rows : config_.max_num_seqs;
  int64_t rows = 0;
  for (const auto& c : plan.chunks) rows += c.logits_rows();
  for (auto it = plan.chunks.rbegin(); it != plan.chunks.rend() && rows > limit; ++it) {
    if (!it->all_logits || it->count <= 1) continue;
    const int64_t cut = std::min(it->count - 1, rows - limit);
    it->count -= cut;
    it->needs_logits = false;  // it no longer reaches the last token
    plan.num_tokens -= cut;
    rows -= cut;
  }
}

}  // namespace seatrt::engine
