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

// One element's frame waiting for a worker; lives on the element's stack while it waits.
struct Request {
  std::span<const FaceChw> faces;
  BatchPolicy policy;
  unsigned long long client = 0;
  Clock::time_point arrived;
  bool taken = false;  // a worker is running it: it can no longer be cancelled
  bool done = false;
  std::optional<Result<Embeddings>> result;
};

struct ClientState {
  bool cancelled = false;  // cancel() until resume(): submit() fails at once
  bool missed = false;     // a batch timed out waiting for it; not waited for again until it submits
                           // while another stream's request is queued (see submit())
  bool running = false;    // a worker is running its request: it cannot submit before that ends
};

Error cancelled_error() { return Error{ErrorKind::Device, "embedding cancelled: the stream is flushing or stopping"}; }

}  // namespace

class SharedEngine {
 public:
  // One worker per session; sessions.front() is the engine as loaded (its info() is the engine's).
  SharedEngine(std::vector<std::unique_ptr<EngineClient>> sessions, int threads, int requested_sessions)
      : sessions_(std::move(sessions)), threads_(threads), requested_sessions_(requested_sessions) {
    stats_.sessions = static_cast<unsigned>(sessions_.size());
    try {
      for (const auto& session : sessions_) workers_.emplace_back([this, inner = session.get()] { serve(*inner); });
    } catch (...) {  // a thread that could not start: stop the ones that did before failing the load
      stop();
      throw;
    }
  }

  ~SharedEngine() { stop(); }

  SharedEngine(const SharedEngine&) = delete;
  SharedEngine& operator=(const SharedEngine&) = delete;

  const EngineInfo& info() const { return sessions_.front()->info(); }
  int threads() const { return threads_; }
  int requested_sessions() const { return requested_sessions_; }

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
    work_.notify_all();  // a worker may be waiting for this client's request
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
    // A submit alone says nothing: a stream downstream of another on this engine always submits
    // after the other's request finished, and waiting for it again would cost a timeout per frame.
    // Meeting another stream's queued request shows it runs alongside the others.
    if (std::any_of(queue_.begin(), queue_.end(), [&](const Request* r) { return r->client != client; }))
      state.missed = false;
    queue_.push_back(&request);
    work_.notify_all();
    done_.wait(guard, [&] { return request.done; });
    return std::move(*request.result);
  }

  // Sticky until resume(): withdraws the client's request when no worker has started it (a
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

  // Whether the gathering worker may wait for `client` to submit (see the header).
  bool expected_locked(unsigned long long client, const ClientState& state) const {
    return !state.cancelled && !state.missed && !state.running && !has_queued_locked(client);
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
  static Result<std::vector<Embeddings>> embed_together(EngineClient& inner, std::span<Request* const> requests,
                                                        SharedEngineStats& stats) {
    try {
      std::vector<FaceChw> inputs;
      for (const Request* r : requests) inputs.insert(inputs.end(), r->faces.begin(), r->faces.end());
      Embeddings all;
      if (!inputs.empty()) {
        ++stats.calls;
        stats.faces += inputs.size();
        stats.largest_batch = std::max<unsigned long long>(stats.largest_batch, inputs.size());
        Result<Embeddings> result = inner.embed(inputs);
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
  static void run(EngineClient& inner, std::span<Request* const> batch, SharedEngineStats& stats) {
    if (batch.size() > 1) {
      Result<std::vector<Embeddings>> together = embed_together(inner, batch, stats);
      if (together) {
        for (std::size_t i = 0; i < batch.size(); ++i) batch[i]->result = std::move(together.value()[i]);
        return;
      }
      ++stats.retries;
    }
    for (Request* r : batch) {
      Result<std::vector<Embeddings>> alone = embed_together(inner, {&r, 1}, stats);
      if (alone)
        r->result = std::move(alone.value().front());
      else
        r->result = alone.error();
    }
  }

  void set_running_locked(std::span<Request* const> batch, bool running) {
    for (const Request* r : batch)
      if (auto it = clients_.find(r->client); it != clients_.end()) it->second.running = running;
  }

  // One worker: `inner` is its own session, which no other thread calls.
  void serve(EngineClient& inner) {
    std::vector<Request*> batch;  // capacity kept between batches
    std::unique_lock<std::mutex> guard(lock_);
    for (;;) {
      // One worker gathers at a time; the others wait until it has taken its batch.
      work_.wait(guard, [&] { return (stopping_ && queue_.empty()) || (!queue_.empty() && !gathering_); });
      if (queue_.empty()) return;  // stopping, nothing left
      gathering_ = true;
      gather_locked(guard);
      if (queue_.empty()) {  // cancelled while waiting
        gathering_ = false;
        work_.notify_all();
        continue;
      }

      std::size_t faces = 0;
      const std::size_t n = batch_end_locked(&faces);
      batch.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      for (Request* r : batch) r->taken = true;
      set_running_locked(batch, true);
      gathering_ = false;
      work_.notify_all();  // the next idle worker may gather what remains
      stats_.peak_concurrent = std::max(stats_.peak_concurrent, ++running_batches_);
      guard.unlock();

      SharedEngineStats stats;  // the requests' owners wait for `done`: their results are ours to write
      run(inner, batch, stats);

      guard.lock();
      --running_batches_;
      stats_.calls += stats.calls;
      stats_.faces += stats.faces;
      stats_.largest_batch = std::max(stats_.largest_batch, stats.largest_batch);
      stats_.retries += stats.retries;
      set_running_locked(batch, false);
      for (Request* r : batch) r->done = true;
      done_.notify_all();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> guard(lock_);
      stopping_ = true;
    }
    work_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  const std::vector<std::unique_ptr<EngineClient>> sessions_;  // one per worker, called only by it
  const int threads_;
  const int requested_sessions_;
  mutable std::mutex lock_;
  std::condition_variable work_;  // workers wait for requests (and for the gathering one)
  std::condition_variable done_;  // elements wait for their results
  std::deque<Request*> queue_;
  std::map<unsigned long long, ClientState> clients_;
  unsigned long long last_client_ = 0;
  bool stopping_ = false;
  bool gathering_ = false;  // a worker is gathering a batch
  unsigned running_batches_ = 0;
  SharedEngineStats stats_;
  std::vector<std::thread> workers_;  // last: started once everything above exists
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

std::shared_ptr<SharedEngine> make_shared_engine(std::unique_ptr<EngineClient> inner, int threads, int sessions) {
  sessions = std::clamp(sessions, 1, kMaxEngineSessions);
  std::vector<std::unique_ptr<EngineClient>> clients;
  clients.push_back(std::move(inner));
  while (static_cast<int>(clients.size()) < sessions) {
    Result<std::unique_ptr<EngineClient>> another = clients.front()->another_session();
    if (!another) break;  // an engine without more sessions is served by the ones it has
    clients.push_back(std::move(another).value());
  }
  return std::make_shared<SharedEngine>(std::move(clients), threads, sessions);
}

std::unique_ptr<EngineClient> make_shared_client(std::shared_ptr<SharedEngine> engine, std::string note) {
  return std::make_unique<SharedClient>(std::move(engine), std::move(note));
}

int shared_engine_threads(const SharedEngine& engine) { return engine.threads(); }

int shared_engine_sessions(const SharedEngine& engine) { return engine.requested_sessions(); }

SharedEngineStats shared_engine_stats(const SharedEngine& engine) { return engine.stats(); }

std::size_t shared_engine_queued(const SharedEngine& engine) { return engine.queued(); }

}  // namespace taconite::gst
