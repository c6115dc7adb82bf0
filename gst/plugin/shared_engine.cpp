#include "shared_engine.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace taconite::gst {

namespace {

using Clock = std::chrono::steady_clock;
using Embeddings = std::vector<Embedding>;

// One element's frame waiting for the worker; lives on the element's stack while it waits.
struct Request {
  std::span<const FaceChw> faces;
  BatchPolicy policy;
  unsigned long long client = 0;
  Clock::time_point arrived;
  bool taken = false;  // the worker is running it: it can no longer be cancelled
  bool done = false;
  std::optional<Result<Embeddings>> result;
};

struct ClientState {
  bool cancelled = false;  // cancel() until resume(): submit() fails at once
  bool missed = false;     // a batch timed out waiting for it; not waited for again until it submits
};

Error cancelled_error() { return Error{ErrorKind::Device, "embedding cancelled: the stream is flushing or stopping"}; }

}  // namespace

class SharedEngine {
 public:
  SharedEngine(std::unique_ptr<EngineClient> inner, int threads) : inner_(std::move(inner)), threads_(threads) {
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
  int threads() const { return threads_; }

  unsigned long long attach() {
    std::lock_guard<std::mutex> guard(lock_);
    clients_.emplace(++last_client_, ClientState{});
    return last_client_;
  }

  void detach(unsigned long long client) {
    {
      std::lock_guard<std::mutex> guard(lock_);
      clients_.erase(client);
    }
    work_.notify_all();  // the worker may be waiting for this client's request
  }

  Result<Embeddings> submit(unsigned long long client, std::span<const FaceChw> faces, const BatchPolicy& policy) {
    Request request;
    request.faces = faces;
    request.policy = policy;
    request.client = client;
    request.arrived = Clock::now();
    std::unique_lock<std::mutex> guard(lock_);
    ClientState& state = clients_.at(client);
    if (state.cancelled) return cancelled_error();  // a cancel that came before this submit still counts
    state.missed = false;
    queue_.push_back(&request);
    work_.notify_all();
    done_.wait(guard, [&] { return request.done; });
    return std::move(*request.result);
  }

  // Sticky until resume(): withdraws the client's request when the worker has not started it (a
  // flushing element must not wait for other streams' faces) and fails its later submits; a
  // started request finishes normally.
  void cancel(unsigned long long client) {
    std::lock_guard<std::mutex> guard(lock_);
    clients_.at(client).cancelled = true;
    for (auto it = queue_.begin(); it != queue_.end();) {
      Request* r = *it;
      if (r->client == client && !r->taken) {
        r->result = cancelled_error();
        r->done = true;
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    done_.notify_all();
    work_.notify_all();  // one stream fewer to wait for
  }

  void resume(unsigned long long client) {
    std::lock_guard<std::mutex> guard(lock_);
    clients_.at(client).cancelled = false;
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

  bool has_queued_locked(unsigned long long client) const {
    return std::any_of(queue_.begin(), queue_.end(), [&](const Request* r) { return r->client == client; });
  }

  // Whether the worker may wait for `client` to submit (see the header).
  bool expected_locked(unsigned long long client, const ClientState& state) const {
    return !state.cancelled && !state.missed && !has_queued_locked(client);
  }

  bool anyone_expected_locked() const {
    return std::any_of(clients_.begin(), clients_.end(), [&](const auto& c) { return expected_locked(c.first, c.second); });
  }

  // Waits for more streams while the batch is not full, someone is expected and the oldest
  // request's timeout has not passed; a timeout marks the streams it waited for as missed.
  void gather_locked(std::unique_lock<std::mutex>& guard) {
    while (!queue_.empty()) {
      std::size_t faces = 0;
      const std::size_t n = batch_end_locked(&faces);
      const Request* oldest = queue_.front();
      const bool full = faces >= oldest->policy.max_faces || n < queue_.size();
      if (full || stopping_ || oldest->policy.timeout.count() <= 0 || !anyone_expected_locked()) return;
      if (work_.wait_until(guard, oldest->arrived + oldest->policy.timeout) == std::cv_status::timeout) {
        ++stats_.timeouts;
        for (auto& [id, state] : clients_)
          if (expected_locked(id, state)) state.missed = true;
        return;
      }
    }
  }

  // One engine call for the requests' faces: a result per request, or the call's error. Never
  // throws: an exception of the engine (or of an allocation here) becomes the error.
  Result<std::vector<Embeddings>> embed_together(std::span<Request* const> requests, SharedEngineStats& stats) {
    try {
      std::vector<FaceChw> inputs;
      for (const Request* r : requests) inputs.insert(inputs.end(), r->faces.begin(), r->faces.end());
      Embeddings all;
      if (!inputs.empty()) {
        ++stats.calls;
        stats.faces += inputs.size();
        stats.largest_batch = std::max<unsigned long long>(stats.largest_batch, inputs.size());
        Result<Embeddings> result = inner_->embed(inputs);
        if (!result) return result.error();
        all = std::move(result).value();
      }
      if (all.size() != inputs.size())
        return Error{ErrorKind::Device, "the engine returned " + std::to_string(all.size()) + " embeddings for " +
                                            std::to_string(inputs.size()) + " faces"};
      std::vector<Embeddings> split;
      auto next = std::make_move_iterator(all.begin());
      for (const Request* r : requests) {
        split.emplace_back(next, next + static_cast<std::ptrdiff_t>(r->faces.size()));
        next += static_cast<std::ptrdiff_t>(r->faces.size());
      }
      return split;
    } catch (const std::exception& e) {
      return Error{ErrorKind::Device, std::string("the engine failed with an exception: ") + e.what()};
    } catch (...) {
      return Error{ErrorKind::Device, "the engine failed with an unknown exception"};
    }
  }

  // Gives every request of the batch its result. A failed call of several requests is retried
  // one request at a time: only a request that fails on its own gets an error.
  void run(std::span<Request* const> batch, SharedEngineStats& stats) {
    if (batch.size() > 1) {
      Result<std::vector<Embeddings>> together = embed_together(batch, stats);
      if (together) {
        for (std::size_t i = 0; i < batch.size(); ++i) batch[i]->result = std::move(together.value()[i]);
        return;
      }
      ++stats.retries;
    }
    for (Request* r : batch) {
      Result<std::vector<Embeddings>> alone = embed_together({&r, 1}, stats);
      if (alone)
        r->result = std::move(alone.value().front());
      else
        r->result = alone.error();
    }
  }

  void serve() {
    std::unique_lock<std::mutex> guard(lock_);
    for (;;) {
      work_.wait(guard, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      gather_locked(guard);
      if (queue_.empty()) continue;  // cancelled while waiting

      std::size_t faces = 0;
      const std::size_t n = batch_end_locked(&faces);
      batch_.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      for (Request* r : batch_) r->taken = true;
      guard.unlock();

      SharedEngineStats stats;  // the requests' owners wait for `done`: their results are ours to write
      run(batch_, stats);

      guard.lock();
      stats_.calls += stats.calls;
      stats_.faces += stats.faces;
      stats_.largest_batch = std::max(stats_.largest_batch, stats.largest_batch);
      stats_.retries += stats.retries;
      for (Request* r : batch_) r->done = true;
      done_.notify_all();
    }
  }

  std::unique_ptr<EngineClient> inner_;  // only the worker calls embed()
  const int threads_;
  mutable std::mutex lock_;
  std::condition_variable work_;  // the worker waits for requests
  std::condition_variable done_;  // elements wait for their results
  std::deque<Request*> queue_;
  std::vector<Request*> batch_;  // the worker's current batch (capacity kept between batches)
  std::map<unsigned long long, ClientState> clients_;
  unsigned long long last_client_ = 0;
  bool stopping_ = false;
  SharedEngineStats stats_;
  std::thread worker_;  // last: started once everything above exists
};

namespace {

class SharedClient final : public EngineClient {
 public:
  SharedClient(std::shared_ptr<SharedEngine> engine, std::string note)
      : engine_(std::move(engine)), id_(engine_->attach()), note_(std::move(note)) {}
  ~SharedClient() override { engine_->detach(id_); }

  const EngineInfo& info() const override { return engine_->info(); }
  Result<Embeddings> embed(std::span<const FaceChw> faces) override { return engine_->submit(id_, faces, policy_); }
  void set_batching(const BatchPolicy& policy) override { policy_ = policy; }
  void cancel() override { engine_->cancel(id_); }
  void resume() override { engine_->resume(id_); }
  const std::string& sharing_note() const override { return note_; }

 private:
  std::shared_ptr<SharedEngine> engine_;
  unsigned long long id_;
  std::string note_;
  BatchPolicy policy_;
};

}  // namespace

std::shared_ptr<SharedEngine> make_shared_engine(std::unique_ptr<EngineClient> inner, int threads) {
  return std::make_shared<SharedEngine>(std::move(inner), threads);
}

std::unique_ptr<EngineClient> make_shared_client(std::shared_ptr<SharedEngine> engine, std::string note) {
  return std::make_unique<SharedClient>(std::move(engine), std::move(note));
}

int shared_engine_threads(const SharedEngine& engine) { return engine.threads(); }

SharedEngineStats shared_engine_stats(const SharedEngine& engine) { return engine.stats(); }

std::size_t shared_engine_queued(const SharedEngine& engine) { return engine.queued(); }

}  // namespace taconite::gst
