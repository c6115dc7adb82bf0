#include "track_cache.hpp"

#include <algorithm>

namespace taconite::gst {

namespace {

double area(const PixelBox& box) { return static_cast<double>(box.width) * box.height; }

}  // namespace

const CachedEmbedding* TrackCache::reuse(gint64 id, guint64 now, const PixelBox& box, const TrackPolicy& policy) {
  auto it = tracks_.find(id);
  if (it == tracks_.end()) return nullptr;
  CachedEmbedding& track = it->second;
  track.last_seen = now;
  if (now - track.computed_at >= policy.reinfer_interval) return nullptr;
  if (area(box) > track.area * (1.0 + policy.growth)) return nullptr;  // closer: a better view
  return &track;
}

const CachedEmbedding* TrackCache::reuse_best(gint64 id, guint64 now, std::optional<double> quality,
                                              const TrackPolicy& policy) {
  auto it = tracks_.find(id);
  if (it == tracks_.end()) return nullptr;
  CachedEmbedding& track = it->second;
  track.last_seen = now;
  if (!quality) return &track;                                     // a predicted box: keep what we have
  if (now - track.computed_at < policy.best_min_gap) return &track;  // the budget
  return *quality > track.best_tried * (1.0 + policy.best_margin) ? nullptr : &track;
}

bool TrackCache::store(gint64 id, guint64 now, const PixelBox& box, const std::vector<float>& unit, double norm,
                       bool aligned, double tried, double quality, const TrackPolicy& policy, bool tracker_owned) {
  CachedEmbedding& track = tracks_[id];
  track.tracker_owned = tracker_owned;
  const bool fresh = track.unit.empty();
  track.computed_at = now;
  track.area = area(box);
  track.last_seen = std::max(track.last_seen, now);  // an async result is of a frame seen before
  track.best_tried = std::max(track.best_tried, tried);
  const bool better = policy.best ? quality >= track.quality : !policy.keep_best || norm >= track.norm;
  if (fresh || better) {
    track.unit = unit;
    track.norm = norm;
    track.aligned = aligned;
    track.embedded_at = now;
    track.quality = quality;
  }
  return fresh || better;
}

const CachedEmbedding* TrackCache::find(gint64 id) const {
  const auto it = tracks_.find(id);
  return it == tracks_.end() || it->second.unit.empty() ? nullptr : &it->second;
}

void TrackCache::evict(guint64 now, guint timeout) {
  for (auto it = tracks_.begin(); it != tracks_.end();)
    it = !it->second.tracker_owned && now > it->second.last_seen + timeout ? tracks_.erase(it) : std::next(it);
}

void TrackCache::end(const TracksEnded& ended) {
  for (const EndedTrack& track : ended.tracks) tracks_.erase(track.id);
}

}  // namespace taconite::gst
