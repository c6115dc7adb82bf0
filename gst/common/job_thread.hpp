// One thread of its own fed by a bounded queue, for work the streaming thread must never wait for
// (JPEG encoding, files, database writes): submit() only moves a job into the queue, or refuses it
// when the queue is full. Jobs run one at a time, in the order submitted. Used by taconitepublish's
// best-face writer and taconiteidentify's unknown-face writer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace taconite::gst {

template <typename Job>
class JobThread {
 public:
  // Runs on the thread, one job at a time. It must not throw (no exception may leave a thread).
  using Work = std::function<void(Job&)>;

  JobThread(std::size_t max_queued, Work work) : max_queued_(max_queued), work_(std::move(work)) {
    thread_ = std::thread([this] { run(); });
  }
  ~JobThread() { stop(); }
  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;

  // Queues a job; false (the job dropped) when max_queued jobs wait already. Never waits for the work.
  bool submit(Job job) {
    {
      std::lock_guard<std::mutex> guard(lock_);
      if (stopping_ || queue_.size() >= max_queued_) return false;
      queue_.push_back(std::move(job));
    }
    changed_.notify_all();
    return true;
  }

  // Whether submit() would refuse a job now (stopping, or max_queued jobs wait).
  bool full() const {
    std::lock_guard<std::mutex> guard(lock_);
    return stopping_ || queue_.size() >= max_queued_;
  }

  // Waits up to `timeout_ms` until every queued job has run.
  void drain(unsigned timeout_ms) {
    std::unique_lock<std::mutex> guard(lock_);
    changed_.wait_for(guard, std::chrono::milliseconds(timeout_ms), [&] { return queue_.empty() && !busy_; });
  }

  // Ends the thread: the jobs still queued are dropped (returns how many), the running one
  // finishes first. Later calls return 0.
  std::size_t stop() {
    std::size_t dropped = 0;
    {
      std::lock_guard<std::mutex> guard(lock_);
      stopping_ = true;
      dropped = queue_.size();
      queue_.clear();
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    return dropped;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> guard(lock_);
    for (;;) {
      changed_.wait(guard, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      Job job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      guard.unlock();
      work_(job);
      guard.lock();
      busy_ = false;
      changed_.notify_all();
    }
  }

  const std::size_t max_queued_;
  const Work work_;
  mutable std::mutex lock_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace taconite::gst
