// The engine: one thread that loops schedule -> forward -> sample ->
// report, over a KV pool planned in bytes.  Other threads submit and cancel
// generations; results come back through each request's callbacks (run on
// the engine thread).
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

#include "kv_manager.hpp"
#include "model_runner.hpp"
#include "scheduler.hpp"

namespace seatrt::engine {

struct EngineConfig {
  SchedulerConfig scheduler;
  int64_t max_model_len = 0;
  bool prefix_caching = true;
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
  // Cancels a generation: its blocks are freed before the next step.
  void cancel(int64_t id);
  // Refuse new submissions from now on (SIGTERM drain).
  void stop_accepting() { draining_ = true; }
  EngineStats stats() const;
  // True when nothing is waiting or running.
  bool idle() const;

 private:
  void loop();
  void step();
  void finish(const SequencePtr& seq, FinishReason reason, const std::string& error, TokenEvent stop_event = {});

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
  std::thread thread_;
};

}  // namespace seatrt::engine
