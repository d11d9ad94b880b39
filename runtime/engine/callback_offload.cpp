#include "callback_offload.hpp"

#include <utility>

namespace seatrt::engine {

CallbackOffload::CallbackOffload(int threads, std::function<void()> on_done)
    : threads_(threads < 1 ? 1 : threads), on_done_(std::move(on_done)) {}

CallbackOffload::~CallbackOffload() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : pool_) t.join();
}

std::shared_ptr<PendingCallback> CallbackOffload::run(std::function<CallbackOutcome()> work) {
  auto pending = std::make_shared<PendingCallback>();
  {
    std::lock_guard lock(mutex_);
    // Threads start with the first slow request: most seats never need them.
    if (pool_.empty())
      for (int i = 0; i < threads_; ++i) pool_.emplace_back([this] { worker(); });
    tasks_.push_back([this, pending, work = std::move(work)] {
      pending->outcome = work();
      pending->done.store(true, std::memory_order_release);
      if (on_done_) on_done_();
    });
  }
  wake_.notify_one();
  return pending;
}

void CallbackOffload::worker() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and every task handed over has run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace seatrt::engine
