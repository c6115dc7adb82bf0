// taconiteadaface's instance and what its files share: the settings, the streaming state, the
// counters and the engine slot, and the functions each file gives the others. Private to gst/adaface/.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "async_embedder.hpp"
#include "engine_client.hpp"
#include "enums.hpp"
#include "face_quality.hpp"
#include "gsttaconiteadaface.h"
#include "item_queue.hpp"
#include "property_table.hpp"
#include "track_cache.hpp"
#include "tracks_ended.hpp"

namespace taconite::gst::adaface {

constexpr guint kDefaultMaxQueued = 8;
constexpr LeakyMode kDefaultLeaky = LeakyMode::No;
constexpr guint64 kDefaultLatency = 0;  // automatic
constexpr guint64 kMaxLatency = 3600 * GST_SECOND;
// latency=0: the reported processing latency is the slowest of this many warm-up frames that ran
// the engine (the first one, which pays one-time set-up, left out).
constexpr guint kLatencyWarmupFrames = 30;

// Property values and their defaults (see declare_properties()); guarded by the object lock.
struct Settings {
  std::string bundle;      // `model` and its alias `bundle`
  std::string model_proc;  // `model-proc`
  BackendChoice backend = BackendChoice::Auto;
  taconite::Precision precision = taconite::Precision::Auto;
  gint threads = 0;
  gint sessions = 1;
  InputMode input_mode = InputMode::Rois;
  std::string roi_type = "face";
  guint min_face_size = 0;
  guint max_faces = 0;
  guint max_embeddings = 0;  // engine calls' faces per frame; 0: no limit
  double margin = 0.0;
  ChannelOrder channel_order = ChannelOrder::Auto;
  gboolean post_messages = FALSE;
  guint batch_size = 1;
  guint batch_timeout_us = 0;
  guint interval = 1;
  TrackPolicy tracks;  // track-id-param, reinfer-*, track-best, track-timeout, best-*
  UntrackedFaces untracked = UntrackedFaces::EveryFrame;
  gboolean async_tracks = FALSE;  // tracked faces embedded on the element's own thread (AsyncEmbedder)
};

// The engine handle and, with async-tracks, the element's background embedder: set at
// READY->PAUSED and dropped at PAUSED->READY on the state-change thread, while FLUSH_START (any
// thread) and the task use them; shared, so a reader keeps them alive.
class EngineSlot {
 public:
  std::shared_ptr<EngineClient> get() const {
    std::lock_guard<std::mutex> guard(lock_);
    return client_;
  }
  std::shared_ptr<AsyncEmbedder> async() const {
    std::lock_guard<std::mutex> guard(lock_);
    return async_;
  }
  void set(std::shared_ptr<EngineClient> client, std::shared_ptr<AsyncEmbedder> async = nullptr) {
    std::lock_guard<std::mutex> guard(lock_);
    client_.swap(client);  // the old ones are released outside the lock
    async_.swap(async);
  }
  // Flushing or stopping: requests waiting in the shared engine return at once (sticky until resume()).
  void cancel() const {
    if (const auto client = get()) client->cancel();
    if (const auto embedder = async()) embedder->cancel();
  }
  void resume() const {
    if (const auto client = get()) client->resume();
    if (const auto embedder = async()) embedder->resume();
  }

 private:
  mutable std::mutex lock_;
  std::shared_ptr<EngineClient> client_;
  std::shared_ptr<AsyncEmbedder> async_;
};

// async-tracks, per stream: which tracks' background embeddings no frame carried yet, and how many
// frames a new track was refused a place in the background embedder (after kFirstEmbeddingPatience
// its frame waits for one).
constexpr guint kFirstEmbeddingPatience = 5;
constexpr std::size_t kMaxRefusedTracks = 4096;  // bounds the map for ids no tracks-ended event ends
struct AsyncTracks {
  std::unordered_set<gint64> fresh;
  std::unordered_map<gint64, guint> refused;
  void clear() {
    fresh.clear();
    refused.clear();
  }
  void end(const TracksEnded& ended) {
    for (const EndedTrack& track : ended.tracks) {
      fresh.erase(track.id);
      refused.erase(track.id);
    }
  }
};

// What only the streaming (task) thread touches while the pads are active.
struct Stream {
  GstVideoInfo info;
  bool have_info = false;
  GstSegment segment;
  std::vector<float> scratch;
  guint64 frame_index = 0;  // buffers since STREAM_START/flush, for `interval` and tracks
  TrackCache tracks;        // cached embeddings per tracking id
  AsyncTracks async;        // async-tracks: the streaming thread's side of the background embedder
  taconite::vision::NormStatistics norms;  // the model's embedding norms, for the quality (kept across flushes)
  bool warned_non_finite = false;  // the engine's first NaN/Inf embedding of the stream was reported
};

struct Counters {
  std::atomic<guint64> frames_in{0};
  std::atomic<guint64> frames_out{0};
  std::atomic<guint64> faces_embedded{0};
  std::atomic<guint64> faces_skipped{0};
  std::atomic<guint64> faces_cached{0};
  std::atomic<guint64> frames_embedded{0};  // QoS "processed"
  std::atomic<guint64> frames_skipped{0};   // QoS "dropped" (passed on without embeddings)
  std::atomic<GstClockTime> qos_earliest{GST_CLOCK_TIME_NONE};  // from downstream QoS events
  std::atomic<guint64> processed{0};
  std::atomic<guint64> processing_ns{0};
  std::atomic<GstClockTime> latency{kDefaultLatency};  // the `latency` property
  std::atomic<GstClockTime> warmup_latency{0};         // latency=0: the warm-up bound once known
  guint warmup_frames = 0;                             // task thread only
  GstClockTime warmup_max = 0;                         // task thread only
};

}  // namespace taconite::gst::adaface

struct _GstTaconiteAdaface {
  GstElement parent;
  GstPad* sinkpad;
  GstPad* srcpad;
  taconite::gst::adaface::Settings* settings;
  taconite::gst::ItemQueue* queue;
  taconite::gst::adaface::EngineSlot* engine;
  taconite::gst::adaface::Stream* stream;
  taconite::gst::adaface::Counters* counters;
};

namespace taconite::gst::adaface {

// adaface_engine.cpp: loads (or joins) the shared engine for the `bundle` and `backend` settings;
// on failure posts an error naming the bundle and what to do, and returns FALSE.
gboolean load_engine(GstTaconiteAdaface* self);

// adaface_buffers.cpp: the work of the src-pad task, in stream order.
// A buffer's flow result, and whether the element already posted an error message for it.
struct BufferOutcome {
  GstFlowReturn ret = GST_FLOW_OK;
  bool error_posted = false;
};
// Embeds the buffer's faces (all of them skipped with `skip`) and pushes it.
BufferOutcome process_buffer(GstTaconiteAdaface* self, GstBuffer* buffer, bool skip);
void process_event(GstTaconiteAdaface* self, GstEvent* event);
bool answer_query(GstTaconiteAdaface* self, GstQuery* query);
// The processing latency the element reports: the `latency` property, else the warm-up bound
// (0 until known).
GstClockTime processing_latency(GstTaconiteAdaface* self);

// adaface_frame_steps.cpp: one buffer's faces embedded with `client` and attached (only flagged
// skipped with `skip`); sets `used_engine` when the engine ran. Returns the (possibly new) buffer,
// or nullptr, the buffer released, after posting an error or when a flush cancelled the engine
// request. `buffer` always holds the current buffer, for the caller's exception boundary.
GstBuffer* embed_frame_faces(GstTaconiteAdaface* self, EngineClient& client, GstBuffer*& buffer, bool skip,
                             bool* used_engine);

// adaface_properties.cpp: every property, declared once.
void declare_properties(PropertyTable<GstTaconiteAdaface, Settings>& table);

}  // namespace taconite::gst::adaface
