// The CPU provider's own worker threads.  parallel_for hands out independent
// items (rows, heads, experts); an item is always computed by one thread with
// a fixed operation order, so results never depend on the thread count or on
// scheduling.  If the pool is already running a job (another stream's call,
// or a nested call from inside an item) the caller runs its items itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace seatrt::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int32_t threads);  // total threads including the caller; >= 1
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int32_t threads() const { return static_cast<int32_t>(workers_.size()) + 1; }

  // Calls item(i) for every i in [0, count); returns when all are done.
  // The first exception thrown by an item is rethrown here.
  void parallel_for(int64_t count, const std::function<void(int64_t)>& item);

 private:
  void worker_loop();
  void run_items();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<bool> busy_{false};
  bool stopping_ = false;
  uint64_t generation_ = 0;
  int32_t finished_ = 0;  // workers done with the current job
  // The job being run (valid while busy_).
  const std::function<void(int64_t)>* item_ = nullptr;
  int64_t count_ = 0;
  std::atomic<int64_t> next_{0};
  std::exception_ptr error_;
};

}  // namespace seatrt::cpu
