#include "shared_engine.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace taconite::gst {

namespace {

using Clock = std::chrono::steady_clock;

// One element's frame waiting for the worker; lives on the element's stack while it waits.
struct Request {
  std::span<const FaceChw> faces;
  BatchPolicy policy;
  unsigned long long client = 0;
  Clock::time_point arrived;
  bool taken = false;  // the worker is running it: it can no longer be cancelled
  bool done = false;
  std::optional<Result<std::vector<Embedding>>> result;
};

}  // namespace

class SharedEngine {
 public:
  explicit SharedEngine(std::unique_ptr<EngineClient> inner) : inner_(std::move(inner)) {
    worker_ = std::thread([this] { serve(); });
  }

  ~SharedEngine() {
    {
      std::lock_guard<std::mutex> guard(lock_);
      stopping_ = true;
    }
    work_.notify_all();
    worker_.join();
  }

  SharedEngine(const SharedEngine&) = delete;
  SharedEngine& operator=(const SharedEngine&) = delete;

  const EngineInfo& info() const { return inner_->info(); }

  unsigned long long attach() {
    std::lock_guard<std::mutex> guard(lock_);
    ++clients_;
    return ++last_client_;
  }

  void detach() {
    {
      std::lock_guard<std::mutex> guard(lock_);
      --clients_;
    }
    work_.notify_all();  // the worker may be waiting for this client's request
  }

  Result<std::vector<Embedding>> submit(unsigned long long client, std::span<const FaceChw> faces,
                                        const BatchPolicy& policy) {
    Request request;
    request.faces = faces;
    request.policy = policy;
    request.client = client;
    request.arrived = Clock::now();
    std::unique_lock<std::mutex> guard(lock_);
    queue_.push_back(&request);
    work_.notify_all();
    done_.wait(guard, [&] { return request.done; });
    return std::move(*request.result);
  }

  // Withdraws the client's request when the worker has not started it (a flushing element must
  // not wait for other streams' faces); a started request finishes normally.
  void cancel(unsigned long long client) {
    std::lock_guard<std::mutex> guard(lock_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      Request* r = *it;
      if (r->client == client && !r->taken) {
        r->result = Error{ErrorKind::Device, "embedding cancelled: the stream is flushing"};
        r->done = true;
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    done_.notify_all();
    work_.notify_all();
  }

  std::size_t queued() const {
    std::lock_guard<std::mutex> guard(lock_);
    return queue_.size();
  }

  SharedEngineStats stats() const {
    std::lock_guard<std::mutex> guard(lock_);
    return stats_;
  }

 private:
  // Faces of the queued requests that fit in one call of the oldest request's batch size.
  std::size_t batch_end_locked(std::size_t* faces) const {
    const std::size_t limit = std::max<std::size_t>(1, queue_.front()->policy.max_faces);
    std::size_t n = 0, total = 0;
    for (const Request* r : queue_) {
      if (n > 0 && total + r->faces.size() > limit) break;
      total += r->faces.size();
      ++n;
    }
    *faces = total;
    return n;
  }

  void serve() {
    std::unique_lock<std::mutex> guard(lock_);
    for (;;) {
      work_.wait(guard, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left

      // Wait for more streams while the batch is not full, not every stream is queued and the
      // oldest request's timeout has not passed.
      bool ready = false;
      while (!ready && !queue_.empty()) {
        std::size_t faces = 0;
        const std::size_t n = batch_end_locked(&faces);
        const Request* oldest = queue_.front();
        const bool full = faces >= oldest->policy.max_faces || n < queue_.size();
        const bool everyone = queue_.size() >= static_cast<std::size_t>(std::max(clients_, 1));
        if (full || everyone || stopping_ || oldest->policy.timeout.count() <= 0) {
          ready = true;
          break;
        }
        if (work_.wait_until(guard, oldest->arrived + oldest->policy.timeout) == std::cv_status::timeout) ready = true;
      }
      if (queue_.empty()) continue;  // cancelled while waiting

      std::size_t faces = 0;
      const std::size_t n = batch_end_locked(&faces);
      std::vector<Request*> batch(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      for (Request* r : batch) r->taken = true;
      guard.unlock();

      std::vector<FaceChw> inputs;
      inputs.reserve(faces);
      for (const Request* r : batch) inputs.insert(inputs.end(), r->faces.begin(), r->faces.end());
      Result<std::vector<Embedding>> result =
          inputs.empty() ? Result<std::vector<Embedding>>(std::vector<Embedding>{}) : inner_->embed(inputs);

      guard.lock();
      ++stats_.calls;
      stats_.faces += inputs.size();
      stats_.largest_batch = std::max<unsigned long long>(stats_.largest_batch, inputs.size());
      std::size_t offset = 0;
      for (Request* r : batch) {
        if (!result) {
          r->result = result.error();
        } else if (result.value().size() != inputs.size()) {
          r->result = Error{ErrorKind::Device, "the engine returned " + std::to_string(result.value().size()) +
                                                   " embeddings for " + std::to_string(inputs.size()) + " faces"};
        } else {
          std::vector<Embedding> mine(std::make_move_iterator(result.value().begin() + static_cast<std::ptrdiff_t>(offset)),
                                      std::make_move_iterator(result.value().begin() +
                                                              static_cast<std::ptrdiff_t>(offset + r->faces.size())));
          r->result = std::move(mine);
        }
        offset += r->faces.size();
        r->done = true;
      }
      done_.notify_all();
    }
  }

  std::unique_ptr<EngineClient> inner_;  // only the worker calls embed()
  mutable std::mutex lock_;
  std::condition_variable work_;  // the worker waits for requests
  std::condition_variable done_;  // elements wait for their results
  std::deque<Request*> queue_;
  int clients_ = 0;
  unsigned long long last_client_ = 0;
  bool stopping_ = false;
  SharedEngineStats stats_;
  std::thread worker_;  // last: started once everything above exists
};

namespace {

class SharedClient final : public EngineClient {
 public:
  explicit SharedClient(std::shared_ptr<SharedEngine> engine) : engine_(std::move(engine)), id_(engine_->attach()) {}
  ~SharedClient() override { engine_->detach(); }

  const EngineInfo& info() const override { return engine_->info(); }
  Result<std::vector<Embedding>> embed(std::span<const FaceChw> faces) override {
    return engine_->submit(id_, faces, policy_);
  }
  void set_batching(const BatchPolicy& policy) override { policy_ = policy; }
  void cancel() override { engine_->cancel(id_); }
  const SharedEngine* shared() const override { return engine_.get(); }

 private:
  std::shared_ptr<SharedEngine> engine_;
  unsigned long long id_;
  BatchPolicy policy_;
};

}  // namespace

std::shared_ptr<SharedEngine> make_shared_engine(std::unique_ptr<EngineClient> inner) {
  return std::make_shared<SharedEngine>(std::move(inner));
}

std::unique_ptr<EngineClient> make_shared_client(std::shared_ptr<SharedEngine> engine) {
  return std::make_unique<SharedClient>(std::move(engine));
}

SharedEngineStats shared_engine_stats(const SharedEngine& engine) { return engine.stats(); }

std::size_t shared_engine_queued(const SharedEngine& engine) { return engine.queued(); }

}  // namespace taconite::gst
