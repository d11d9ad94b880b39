// Continuous batching: which sequences run in the next step and how many of
// their tokens.  Running sequences go first, oldest first, so decodes keep
// flowing; a prompt is prefilled in chunks bounded by the step's token
// budget (max_num_batched_tokens).  When a pool is short, the youngest
// running sequence is preempted: its blocks are freed and it is recomputed
// later (its generated tokens become part of what is prefilled again).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "kv_manager.hpp"
#include "sequence.hpp"

namespace seatrt::engine {

struct SchedulerConfig {
  int32_t max_num_seqs = 8;
  int64_t max_num_batched_tokens = 2048;
  // Bounded queue: beyond it Engine::submit refuses new requests.  Not
  // enforced here: preempted sequences return to the queue and must never
  // be refused after they were admitted.
  int64_t max_waiting = 256;
  // Logits rows one step may produce (the model runner's buffer holds
  // max_num_seqs): a prompt scored for prompt logprobs needs one per token,
  // so its chunks are cut to fit beside one row for every other chunk.
  // 0: max_num_seqs.
  int64_t max_logits_rows = 0;
};

struct ScheduledChunk {
  SequencePtr seq;
  int64_t start = 0;  // first position computed this step
  int64_t count = 0;
  bool needs_logits = false;  // the chunk reaches the sequence's last token
  bool all_logits = false;    // logits at every position (prompt logprobs)
  int64_t logits_rows() const { return all_logits ? count : needs_logits ? 1 : 0; }
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  int64_t num_tokens = 0;
  int64_t preempted = 0;
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, KvManager& kv);

  // Queues a new sequence (admission is the engine's: see max_waiting).
  void enqueue(SequencePtr seq);
  StepPlan schedule();
  // Removes a finished or cancelled sequence and frees its blocks.
  void remove(const SequencePtr& seq);

  size_t num_waiting() const { return waiting_.size(); }
  size_t num_running() const { return running_.size(); }
  const std::deque<SequencePtr>& waiting() const { return waiting_; }
  const std::vector<SequencePtr>& running() const { return running_; }
  const SchedulerConfig& config() const { return config_; }

 private:
  void preempt(const SequencePtr& seq);
  void fit_logits_rows(StepPlan& plan) const;

  SchedulerConfig config_;
  KvManager& kv_;
  std::deque<SequencePtr> waiting_;
  std::vector<SequencePtr> running_;  // admission order: oldest first
};

}  // namespace seatrt::engine
