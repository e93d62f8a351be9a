// The relay's queue of jobs (relay.cpp): the TCP server's worker thread
// posts a job and waits for its result; the core thread, which alone makes MPI and HDF5
// calls, runs them one at a time. Private to rewind::live.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>

#include "rewind/collector/handler.hpp"

namespace rwd::live {

class JobQueue {
 public:
  /// Runs `f` on the core thread and returns its result (or rethrows); refused with
  /// internal once the queue is closed (the run has ended).
  template <class F>
  auto post(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    {
      const std::lock_guard lock(mutex_);
      if (closed_) {
        throw collector::ServiceError(collector::ErrorCode::internal,
                                      "the run has ended; the collector is shutting down");
      }
      jobs_.emplace_back([&task] { task(); });
    }
    cv_.notify_one();
    return result.get();
  }

  /// The next job, waiting up to `wait` for one (empty when none came). When none is
  /// queued and `finished` (the run has ended), closes the queue (later posts throw) and
  /// returns false: the core's loop ends. Core thread.
  bool next(std::function<void()>& job, std::chrono::milliseconds wait, bool finished) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, wait, [&] { return !jobs_.empty(); });
    if (!jobs_.empty()) {
      job = std::move(jobs_.front());
      jobs_.pop_front();
      return true;
    }
    job = nullptr;
    if (finished) closed_ = true;
    return !finished;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool closed_ = false;
};

}  // namespace rwd::live
