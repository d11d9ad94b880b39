// The engine: one thread that loops schedule -> forward -> sample ->
// report, over a KV pool planned in bytes.  Other threads submit and cancel
// generations; results come back through each request's callbacks (run on
// the engine thread, or, for a sequence whose callback proved slow, on the
// offload pool one at a time: callback_offload.hpp).
#pragma once

#include <atomic>
#include <string>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "callback_offload.hpp"
#include "kv_manager.hpp"
#include "model_runner.hpp"
#include "scheduler.hpp"

namespace seatrt::engine {

struct EngineConfig {
  SchedulerConfig scheduler;
  int64_t max_model_len = 0;
  bool prefix_caching = true;
  // A sequence whose on_token took longer than this has its later output
  // callbacks run off the engine thread (callback_offload.hpp).
  double slow_callback_s = 0.010;
};

struct EngineStats {
  int64_t waiting = 0;
  int64_t running = 0;
  int64_t blocks_used = 0;
  int64_t blocks_total = 0;
  int64_t preemptions = 0;
  int64_t non_finite = 0;  // rows of logits that held a NaN or infinity
  int64_t steps = 0;
  // Health: forward steps that failed in a row (0 after a good one) and the
  // last failure; how long the step in progress has run (0 between steps;
  // a plugin that hangs shows here).
  int64_t failed_steps_in_a_row = 0;
  std::string last_step_error;
  double step_running_s = 0;
  int64_t slow_callback_sequences = 0;  // sequences whose output callbacks were moved off the engine thread
  // Where the steps' time went (steps that ran a batch): all of it, and the
  // model runner's forward and sample calls within it.  The rest is the
  // engine's host work between the model's calls (scheduling, the batch,
  // masks, output callbacks: parsers, detokenizing, stop strings), which a
  // device waits through.
  double step_seconds = 0;
  double model_seconds = 0;
};

enum class SubmitStatus { accepted, queue_full, draining };

class Engine {
 public:
  Engine(const EngineConfig& config, const KvPlan& plan, std::unique_ptr<ModelRunner> runner);
  ~Engine();  // stops the thread; unfinished requests finish as cancelled
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const KvPlan& kv_plan() const { return kv_.plan(); }
  const EngineConfig& config() const { return config_; }

  // Queues a generation; *id receives its id when accepted.
  SubmitStatus submit(GenerationRequest request, int64_t* id);
  // Queues all of them or none (one HTTP request's choices): when the queue
  // cannot take every one, none is queued.  ids receives theirs, in order.
  SubmitStatus submit_all(std::vector<GenerationRequest> requests, std::vector<int64_t>* ids);
  // Cancels a generation: its blocks are freed before the next step.
  void cancel(int64_t id);
  // Refuse new submissions from now on (SIGTERM drain).
  void stop_accepting() { draining_ = true; }
  EngineStats stats() const;
  // True when nothing is waiting or running.
  bool idle() const;
  // The model's logits: requests' token ids (logit_bias) must lie below it.
  int32_t vocab_size() const { return runner_->vocab_size(); }
  // Whether a request may carry a logit bias (ModelRunner's answer).
  bool supports_logit_bias() const { return runner_->supports_logit_bias(); }

 private:
  void loop();
  // One step; false when it ran nothing (every runnable sequence waits for
  // its offloaded callback, or nothing fits).
  bool step();
  // Hands a slow sequence's on_token (and its next mask) to the offload pool.
  void offload_token(const SequencePtr& seq, const TokenEvent& event);
  // Applies the outcomes of offloaded callbacks that have finished.
  void resolve_offloaded();
  void finish(const SequencePtr& seq, FinishReason reason, const std::string& error, TokenEvent stop_event = {});
  // Hands a sequence's prompt logprobs to its request once all are scored
  // (at most once); false when that failed and finished the sequence.
  bool deliver_prompt_logprobs(const SequencePtr& seq);

  EngineConfig config_;
  KvManager kv_;
  Scheduler scheduler_;
  std::unique_ptr<ModelRunner> runner_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<SequencePtr> inbox_;
  std::unordered_set<int64_t> cancels_;
  std::unordered_set<int64_t> live_ids_;
  int64_t next_id_ = 1;
  bool stop_ = false;
  std::atomic<bool> draining_{false};
  EngineStats stats_;  // guarded by mutex_
  std::atomic<int64_t> step_started_ns_{0};  // steady clock; 0 between steps
  bool offload_done_ = false;                // guarded by mutex_: an offloaded callback finished
  std::vector<SequencePtr> offloaded_;       // engine thread: sequences with a callback in flight
  // Declared after mutex_ and wake_ (its tasks notify them), destroyed
  // before them; the engine thread is joined before either.
  CallbackOffload offload_;
  std::thread thread_;
};

}  // namespace seatrt::engine
