// async-tracks: tracked faces embedded on a thread of the element's own, through a client of its own
// of the shared engine, so a frame never waits for the engine for them (DeepStream's
// classifier-async-mode). Under overload a frame that brings a face to embed would otherwise take
// a detection plus an embedding, the others a detection only: the longest gap between analysed
// frames was 3-5 mean ones. The streaming thread submits a face and goes on; it takes the results
// at its next frames and stores them in its TrackCache, where the track's later frames find them.
//
// Bounded: at most kMaxJobs faces wait or run, one per track. A track's first embedding (what its
// identity waits for) goes before re-embeddings of better views: it takes the place of a waiting
// one; when every place holds a first embedding the streaming thread may wait for a place
// (wait_for_room; it does for a track refused on several frames): frames then go at the engine's
// pace, as without async-tracks, instead of leaving new tracks without an embedding while the
// frames take all the CPU. Thread-safe; the streaming thread submits and takes, any thread may
// cancel() (flush, stop).
#pragma once

#include <gst/gst.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_set>
#include <vector>

#include "engine_client.hpp"
#include "face_selection.hpp"
#include "tracks_ended.hpp"

namespace taconite::gst::adaface {

// What the streaming thread needs back to store a result in its TrackCache.
struct AsyncFace {
  gint64 track = 0;
  guint64 frame = 0;      // the stream's frame index the face was taken from
  PixelBox box;
  bool aligned = false;
  double tried = 0.0;     // the face's quality before embedding
  bool tracker_owned = false;
};

struct AsyncResult {
  AsyncFace face;
  Result<Embedding> embedding;  // raw, or the engine's error
};

class AsyncEmbedder {
 public:
  static constexpr std::size_t kMaxJobs = 2;  // one running, one waiting: a crowd is embedded in turn

  explicit AsyncEmbedder(std::unique_ptr<EngineClient> client);
  ~AsyncEmbedder();  // drops waiting jobs, waits for the running one, joins the thread
  AsyncEmbedder(const AsyncEmbedder&) = delete;
  AsyncEmbedder& operator=(const AsyncEmbedder&) = delete;

  // True while a face of `track` waits, runs, or its result waits to be taken.
  bool has(gint64 track) const;
  bool full() const;
  // True while a face waits or runs (tests wait for it to finish).
  bool busy() const;
  // Queues a copy of `chw` (channels x height x width floats). A `first` embedding takes the place
  // of a waiting re-embedding when full. Refused (false, nothing copied) when full, for a track it
  // already has, or while cancelled.
  bool submit(const AsyncFace& face, bool first, std::span<const float> chw, int channels, int height, int width);
  // Blocks until a place is free; false when cancelled or stopping meanwhile.
  bool wait_for_room();
  // The results finished since the last call, in submission order.
  std::vector<AsyncResult> take_done();
  // Results of these tracks are not wanted any more (taconitetrack ended them).
  void forget(const TracksEnded& ended);
  // A new stream: every waiting job and result dropped, the running one's result too.
  void discard();
  // Flushing or stopping: discard() and refuse submissions until resume(); the client's queued
  // request returns at once.
  void cancel();
  void resume();

 private:
  struct Job {
    AsyncFace face;
    bool first = false;
    std::vector<float> chw;
    int channels = 0, height = 0, width = 0;
    guint64 generation = 0;
  };
  void run();
  void discard_locked();
  bool full_locked() const { return waiting_.size() + (running_ ? 1 : 0) >= kMaxJobs; }

  std::unique_ptr<EngineClient> client_;
  mutable std::mutex lock_;
  std::condition_variable wake_;  // the thread: a job or stopping
  std::condition_variable room_;  // wait_for_room(): a place freed, cancelled or stopping
  std::deque<Job> waiting_;
  std::optional<gint64> running_;  // the track of the job being embedded
  std::vector<AsyncResult> done_;
  std::unordered_set<gint64> tracks_;  // waiting, running or done
  guint64 generation_ = 0;             // results of older generations are dropped
  bool cancelled_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace taconite::gst::adaface
