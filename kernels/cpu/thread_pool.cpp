#include "thread_pool.hpp"

namespace seatrt::cpu {

ThreadPool::ThreadPool(int32_t threads) {
  for (int32_t i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_items() {
  for (;;) {
    const int64_t i = next_.fetch_add(1);
    if (i >= count_) return;
    try {
      (*item_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      next_.store(count_);  // stop handing out items
    }
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_items();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (++finished_ == static_cast<int32_t>(workers_.size())) done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t count, const std::function<void(int64_t)>& item) {
  if (count <= 0) return;
  bool expected = false;
  if (workers_.empty() || count == 1 || !busy_.compare_exchange_strong(expected, true)) {
    for (int64_t i = 0; i < count; ++i) item(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    item_ = &item;
    count_ = count;
    next_.store(0);
    finished_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_items();
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // Every worker wakes once per job; waiting for all of them (not just for
    // the items) means no worker can still be looking at this job's state
    // when the next job replaces it.
    done_.wait(lock, [&] { return finished_ == static_cast<int32_t>(workers_.size()); });
    error = error_;
    error_ = nullptr;
  }
  busy_.store(false);
  if (error) std::rethrow_exception(error);
}

}  // namespace seatrt::cpu
