// Track reuse: ROIs that carry a tracking id are re-embedded only every `reinfer_interval` frames
// or when their box grew by more than `growth`; in between the cached embedding is attached
// (status CACHED, with its age). Owned by one element's streaming thread; no locking.
#pragma once

#include <gst/video/video.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "face_selection.hpp"

namespace taconite::gst {

struct TrackPolicy {
  std::string id_param = "object_id";  // ROI param structure (field "id") or field holding the id
  guint reinfer_interval = 1;          // 1: every frame (no reuse)
  double growth = 0.2;                 // re-embed when the box area grew by more than this fraction
  bool keep_best = false;              // the cache keeps the highest-norm embedding of the track
  guint timeout = 30;                  // forget tracks missing from more than this many frames in a row

  bool active() const { return reinfer_interval > 1 || keep_best; }
};

struct CachedEmbedding {
  std::vector<float> unit;
  double norm = 0.0;
  bool aligned = false;
  guint64 computed_at = 0;  // frame number of the last computation
  guint64 embedded_at = 0;  // frame number `unit` was computed at (older than computed_at with keep_best)
  double area = 0.0;        // box area at the last computation
  guint64 last_seen = 0;
};

// The tracking id of a ROI: a structure named `id_param` with an integer field "id" (DL Streamer's
// "object_id"), or an integer field named `id_param` in any structure.
std::optional<gint64> roi_track_id(const GstVideoRegionOfInterestMeta* roi, const std::string& id_param);

// The tracking id of each face of one frame (none for whole-buffer faces). An id carried by
// more than one ROI of the frame names no single face: those faces are all treated as untracked,
// so one face's cached embedding is never attached to another.
std::vector<std::optional<gint64>> frame_track_ids(const std::vector<FaceJob>& faces, const std::string& id_param);

class TrackCache {
 public:
  // The embedding to reuse for track `id` seen at frame `now` with `box`, or nullptr when it must
  // be computed (new track, interval reached, or the box grew). Marks the track seen.
  const CachedEmbedding* reuse(gint64 id, guint64 now, const PixelBox& box, const TrackPolicy& policy);

  // Records a computation for track `id` at frame `now`. With keep_best, an embedding with a
  // lower norm than the cached one only refreshes the computation time and box.
  void store(gint64 id, guint64 now, const PixelBox& box, const std::vector<float>& unit, double norm, bool aligned,
             const TrackPolicy& policy);

  // Forgets tracks missing from more than `timeout` consecutive frames up to `now`: a track last
  // seen at frame s is dropped at frame s + timeout + 1 unless seen there.
  void evict(guint64 now, guint timeout);

  void clear() { tracks_.clear(); }
  std::size_t size() const { return tracks_.size(); }

 private:
  std::unordered_map<gint64, CachedEmbedding> tracks_;
};

}  // namespace taconite::gst
