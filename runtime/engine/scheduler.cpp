#include "scheduler.hpp"

#include <algorithm>

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
    plan.chunks.push_back({seq, seq->num_computed, n, seq->num_computed + n == len});
    plan.num_tokens += n;
    budget -= n;
  };

  // Running sequences, oldest first; the youngest make room when short.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    SequencePtr seq = running_[i];
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
  while (plan.preempted == 0 && budget > 0 && !waiting_.empty() &&
         static_cast<int32_t>(running_.size()) < config_.max_num_seqs) {
    SequencePtr seq = waiting_.front();
    if (seq->num_computed == 0 && seq->full_blocks.empty() && seq->window_blocks.empty())
      kv_.match_prefix(*seq);
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(seq->tokens.size()) - seq->num_computed, budget);
    if (!kv_.allocate(*seq, n)) {
      kv_.free(*seq);
      break;
    }
    waiting_.pop_front();
    running_.push_back(seq);
    add(seq, n);
  }
  return plan;
}

}  // namespace seatrt::engine
