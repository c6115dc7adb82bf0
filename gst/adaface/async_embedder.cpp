#include "async_embedder.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

namespace taconite::gst::adaface {

namespace {

// One face's raw embedding, or the engine's error; an exception becomes an error too (no exception
// leaves the thread: the streaming thread reports it as the engine's error).
Result<Embedding> embed_one(EngineClient& client, const FaceChw& face) {
  try {
    Result<std::vector<Embedding>> out = client.embed({&face, 1});
    if (!out) return out.error();
    if (out.value().size() != 1)
      return Error{ErrorKind::Input, "the engine returned " + std::to_string(out.value().size()) +
                                         " embeddings for one face"};
    return std::move(out.value().front());
  } catch (const std::exception& e) {
    return Error{ErrorKind::Input, std::string("the engine threw: ") + e.what()};
  }
}

}  // namespace

AsyncEmbedder::AsyncEmbedder(std::unique_ptr<EngineClient> client)
    : client_(std::move(client)), thread_([this] { run(); }) {}

AsyncEmbedder::~AsyncEmbedder() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    stopping_ = true;
    discard_locked();
  }
  client_->cancel();  // a request still queued in the shared engine returns at once
  wake_.notify_all();
  room_.notify_all();
  thread_.join();
}

bool AsyncEmbedder::has(gint64 track) const {
  std::lock_guard<std::mutex> guard(lock_);
  return tracks_.count(track) != 0;
}

bool AsyncEmbedder::full() const {
  std::lock_guard<std::mutex> guard(lock_);
  return full_locked();
}

bool AsyncEmbedder::busy() const {
  std::lock_guard<std::mutex> guard(lock_);
  return !waiting_.empty() || running_;
}

bool AsyncEmbedder::submit(const AsyncFace& face, bool first, std::span<const float> chw, int channels, int height,
                           int width) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    if (cancelled_ || stopping_ || tracks_.count(face.track)) return false;
    if (full_locked()) {
      // A first embedding takes the place of the last waiting re-embedding (that track tries again later).
      const auto place = std::find_if(waiting_.rbegin(), waiting_.rend(), [](const Job& job) { return !job.first; });
      if (!first || place == waiting_.rend()) return false;
      tracks_.erase(place->face.track);
      waiting_.erase(std::next(place).base());
    }
    Job job{face, first, std::vector<float>(chw.begin(), chw.end()), channels, height, width, generation_};
    // First embeddings before re-embeddings, each in submission order.
    const auto before = first ? std::find_if(waiting_.begin(), waiting_.end(), [](const Job& j) { return !j.first; })
                              : waiting_.end();
    waiting_.insert(before, std::move(job));
    tracks_.insert(face.track);
  }
  wake_.notify_one();
  return true;
}

bool AsyncEmbedder::wait_for_room() {
  std::unique_lock<std::mutex> guard(lock_);
  room_.wait(guard, [&] { return cancelled_ || stopping_ || !full_locked(); });
  return !cancelled_ && !stopping_;
}

std::vector<AsyncResult> AsyncEmbedder::take_done() {
  std::lock_guard<std::mutex> guard(lock_);
  std::vector<AsyncResult> taken;
  taken.swap(done_);
  for (const AsyncResult& r : taken) tracks_.erase(r.face.track);
  return taken;
}

void AsyncEmbedder::forget(const TracksEnded& ended) {
  std::lock_guard<std::mutex> guard(lock_);
  for (const EndedTrack& track : ended.tracks) {
    std::erase_if(waiting_, [&](const Job& job) { return job.face.track == track.id; });
    std::erase_if(done_, [&](const AsyncResult& r) { return r.face.track == track.id; });
    // A running job's result is dropped when it finds its track gone from tracks_.
    tracks_.erase(track.id);
  }
  room_.notify_all();
}

void AsyncEmbedder::discard() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    discard_locked();
  }
  room_.notify_all();
}

void AsyncEmbedder::discard_locked() {
  ++generation_;
  waiting_.clear();
  done_.clear();
  tracks_.clear();
}

void AsyncEmbedder::cancel() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    cancelled_ = true;
    discard_locked();
  }
  room_.notify_all();
  client_->cancel();
}

void AsyncEmbedder::resume() {
  client_->resume();
  std::lock_guard<std::mutex> guard(lock_);
  cancelled_ = false;
}

void AsyncEmbedder::run() {
  std::unique_lock<std::mutex> guard(lock_);
  for (;;) {
    wake_.wait(guard, [&] { return stopping_ || !waiting_.empty(); });
    if (stopping_) return;
    Job job = std::move(waiting_.front());
    waiting_.pop_front();
    running_ = job.face.track;
    guard.unlock();
    Result<Embedding> embedded = embed_one(*client_, {job.chw, job.channels, job.height, job.width});
    guard.lock();
    running_.reset();
    // Dropped: a flush, a new stream or the track's end came meanwhile.
    if (job.generation == generation_ && !cancelled_ && tracks_.count(job.face.track))
      done_.push_back({job.face, std::move(embedded)});
    room_.notify_all();
  }
}

}  // namespace taconite::gst::adaface
