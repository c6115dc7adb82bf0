// Track reuse: ROIs that carry a tracking id are re-embedded only every `reinfer_interval` frames
// or when their box grew by more than `growth` (interval mode), or only when their face quality
// beats the track's best so far (best mode); in between the cached embedding is attached (status
// CACHED, with its age). Owned by one element's streaming thread; no locking.
#pragma once

#include <gst/video/video.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "face_selection.hpp"
#include "tracks_ended.hpp"

namespace taconite::gst {

struct TrackPolicy {
  std::string id_param = "object_id";  // ROI param structure (field "id") or field holding the id
  guint reinfer_interval = 1;          // 1: every frame (no reuse)
  double growth = 0.2;                 // re-embed when the box area grew by more than this fraction
  bool keep_best = false;              // the cache keeps the highest-norm embedding of the track
  guint timeout = 30;                  // forget tracks missing from more than this many frames in a row
                                       // (only those without taconitetrack's uid: it ends its own)
  // Best mode (reinfer-mode=best): replaces reinfer_interval, growth and keep_best.
  bool best = false;
  double best_margin = 0.1;  // re-embed when the face's quality exceeds the best tried by this fraction
  guint best_min_gap = 10;   // frames at least between two embeddings of one track

  bool active() const { return reinfer_interval > 1 || keep_best || best; }
};

struct CachedEmbedding {
  std::vector<float> unit;
  double norm = 0.0;
  bool aligned = false;
  guint64 computed_at = 0;  // frame number of the last computation
  guint64 embedded_at = 0;  // frame number `unit` was computed at (older than computed_at with keep_best)
  double area = 0.0;        // box area at the last computation
  guint64 last_seen = 0;
  double quality = -1.0;    // the embedded face's quality with its norm folded in (< 0: not assessed)
  double best_tried = 0.0;  // best mode: the highest pre-embedding quality embedded so far
  bool tracker_owned = false;  // its ROI carries taconitetrack's uid: ended by its event, never timed out
};

class TrackCache {
 public:
  // The embedding to reuse for track `id` seen at frame `now` with `box`, or nullptr when it must
  // be computed (new track, interval reached, or the box grew). Marks the track seen.
  const CachedEmbedding* reuse(gint64 id, guint64 now, const PixelBox& box, const TrackPolicy& policy);

  // Best mode: the embedding to reuse for track `id` seen at frame `now` whose face has the
  // pre-embedding `quality` (none: the box is predicted, not measured), or nullptr when it must be
  // computed: a new track, or a measured face better than the best embedded so far by more than
  // best_margin and at least best_min_gap frames after the track's last embedding. A predicted box
  // is never embedded once the track has an embedding. Marks the track seen.
  const CachedEmbedding* reuse_best(gint64 id, guint64 now, std::optional<double> quality, const TrackPolicy& policy);

  // Records a computation for track `id` at frame `now` of a face of pre-embedding quality `tried`
  // (< 0: not assessed) and `quality` with its norm folded in. With keep_best, an embedding with a
  // lower norm than the cached one only refreshes the computation time and box; in best mode, one
  // of lower `quality`. `tracker_owned`: the face's ROI carries taconitetrack's uid. `now` may be
  // an earlier frame than the track was last seen at (async-tracks). True when `unit` is now the
  // cached embedding.
  bool store(gint64 id, guint64 now, const PixelBox& box, const std::vector<float>& unit, double norm, bool aligned,
             double tried, double quality, const TrackPolicy& policy, bool tracker_owned);

  // Forgets tracks without taconitetrack's uid missing from more than `timeout` consecutive frames
  // up to `now`: such a track last seen at frame s is dropped at frame s + timeout + 1 unless seen there.
  void evict(guint64 now, guint timeout);
  // Forgets the tracks taconitetrack ended.
  void end(const TracksEnded& ended);

  // Track `id`'s cached embedding, or nullptr; marks nothing.
  const CachedEmbedding* find(gint64 id) const;

  void clear() { tracks_.clear(); }
  std::size_t size() const { return tracks_.size(); }

 private:
  std::unordered_map<gint64, CachedEmbedding> tracks_;
};

}  // namespace taconite::gst
