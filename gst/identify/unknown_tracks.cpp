#include "unknown_tracks.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace taconite::gst {

bool UnknownTracks::seen(std::int64_t track, std::uint64_t frame, std::int64_t utc_ms, TrackVerdict verdict,
                         const FaceCandidate* candidate) {
  auto it = tracks_.find(track);
  if (it == tracks_.end()) {
    if (max_tracks_ > 0 && tracks_.size() >= max_tracks_) {
      auto oldest = std::min_element(tracks_.begin(), tracks_.end(), [](const auto& a, const auto& b) {
        return a.second.last_frame < b.second.last_frame;
      });
      end(oldest->second, pushed_out_);
      tracks_.erase(oldest);
    }
    it = tracks_.emplace(track, Track{utc_ms, utc_ms, frame, verdict, {}, std::nullopt}).first;
  }
  Track& t = it->second;
  t.last_ms = std::max(t.last_ms, utc_ms);
  t.last_frame = frame;
  t.verdict = verdict;
  if (verdict == TrackVerdict::Known) {
    t.best.reset();  // a known face is not kept: free its copy
    t.best_quality = {};
    return false;
  }
  if (!candidate || !t.best_quality.beaten_by(candidate->quality)) return false;
  t.best_quality.take(candidate->quality);
  EndedUnknown best;
  gallery::NewUnknownFace& f = best.face;
  f.embedding.assign(candidate->embedding.begin(), candidate->embedding.end());
  f.norm = std::isfinite(candidate->norm) && candidate->norm > 0.0 ? candidate->norm : 0.0;
  f.track_id = track;
  f.quality = std::max(candidate->quality, 0.0);  // a negative score ranks, but is stored as none
  f.nearest_identity = candidate->nearest_identity;
  f.nearest_name = candidate->nearest_name;
  f.nearest_similarity = std::clamp(candidate->nearest_similarity, -1.0, 1.0);
  t.best = std::move(best);
  return true;
}

void UnknownTracks::set_picture(std::int64_t track, cv::Mat rgb) {
  if (auto it = tracks_.find(track); it != tracks_.end() && it->second.best) it->second.best->rgb = std::move(rgb);
}

void UnknownTracks::end(Track& t, std::vector<EndedUnknown>& out) {
  if (t.verdict != TrackVerdict::Unknown || !t.best) return;
  EndedUnknown ended = std::move(*t.best);
  ended.face.first_seen_ms = t.first_ms;
  ended.face.last_seen_ms = t.last_ms;
  out.push_back(std::move(ended));
}

std::vector<EndedUnknown> UnknownTracks::end_stale(std::uint64_t now, unsigned timeout) {
  std::vector<EndedUnknown> out = std::exchange(pushed_out_, {});
  for (auto it = tracks_.begin(); it != tracks_.end();) {
    if (!it->second.until_ended && now > it->second.last_frame + timeout) {
      end(it->second, out);
      it = tracks_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void UnknownTracks::keep_until_ended(std::int64_t track) {
  if (auto it = tracks_.find(track); it != tracks_.end()) it->second.until_ended = true;
}

std::vector<EndedUnknown> UnknownTracks::end_tracks(std::span<const std::int64_t> ids) {
  std::vector<EndedUnknown> out = std::exchange(pushed_out_, {});
  for (std::int64_t id : ids) {
    auto it = tracks_.find(id);
    if (it == tracks_.end()) continue;
    end(it->second, out);
    tracks_.erase(it);
  }
  return out;
}

std::vector<EndedUnknown> UnknownTracks::end_all() {
  std::vector<EndedUnknown> out = std::exchange(pushed_out_, {});
  for (auto& entry : tracks_) end(entry.second, out);
  tracks_.clear();
  return out;
}

}  // namespace taconite::gst
