// Output callbacks moved off the engine thread.  A request's on_token (a
// parser plugin's feed, stop strings) and its next allowed mask run on the
// engine thread between steps, so one slow parser would slow every request.
// Once a sequence's callback has taken longer than
// EngineConfig::slow_callback_s, the engine hands its later callbacks to
// this pool: one task per sequence at a time (a parser instance is used by
// one thread at a time, in order), the sequence skipped by the scheduler
// while its task runs, the outcome applied by the engine thread after.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace seatrt::engine {

// What one offloaded callback round gave.
struct CallbackOutcome {
  bool keep = true;             // on_token's answer (false: a stop string was seen)
  std::string error;            // on_token or allowed_mask failed: the request's error
  bool has_mask = false;        // the request constrains its output: `mask` is the next step's
  std::vector<uint32_t> mask;
};

// A task in flight.  `done` is set (release) after `outcome` is written;
// the engine reads `outcome` only after seeing `done` (acquire).
struct PendingCallback {
  std::atomic<bool> done{false};
  CallbackOutcome outcome;
};

class CallbackOffload {
 public:
  // `on_done` is called on a pool thread after each task (the engine wakes).
  CallbackOffload(int threads, std::function<void()> on_done);
  ~CallbackOffload();  // waits for the tasks already handed over
  CallbackOffload(const CallbackOffload&) = delete;
  CallbackOffload& operator=(const CallbackOffload&) = delete;

  // Runs `work` on a pool thread (started on first use).  Exceptions must
  // not escape `work`: it reports them in its outcome.
  std::shared_ptr<PendingCallback> run(std::function<CallbackOutcome()> work);

 private:
  void worker();

  const int threads_;
  std::function<void()> on_done_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> pool_;
  bool stop_ = false;
};

}  // namespace seatrt::engine
