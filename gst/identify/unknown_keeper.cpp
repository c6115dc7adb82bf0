#include "unknown_keeper.hpp"

#include <utility>

#include "best_face_crop.hpp"
#include "roi_params.hpp"
#include "tracks_ended.hpp"

namespace taconite::gst {

void UnknownKeeper::set_caps(GstCaps* caps) {
  info_.reset();
  GstVideoInfo info;
  const GstCapsFeatures* features = gst_caps_get_features(caps, 0);
  if (features && !gst_caps_features_is_equal(features, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY)) return;
  if (gst_video_info_from_caps(&info, caps)) info_ = info;
}

void UnknownKeeper::begin_buffer(std::uint64_t now, unsigned timeout, const std::string& stream) {
  improved_.clear();
  hand_over(tracks_.end_stale(now, timeout), stream);
}

void UnknownKeeper::face(std::int64_t track, std::uint64_t now, std::int64_t utc_ms, TrackVerdict verdict,
                         GstVideoRegionOfInterestMeta* roi, const GstTaconiteEmbeddingMeta* embedding,
                         const std::vector<vision::IdentityCandidate>& candidates) {
  std::optional<FaceCandidate> candidate;
  if (embedding) {
    candidate.emplace();
    candidate->quality = roi_quality(roi).value_or(embedding->norm);
    candidate->embedding = {embedding->embedding, embedding->dim};
    candidate->norm = embedding->norm;
    if (!candidates.empty()) {
      candidate->nearest_identity = candidates.front().identity;
      candidate->nearest_name = candidates.front().name;
      candidate->nearest_similarity = candidates.front().similarity;
    }
  }
  const bool better = tracks_.seen(track, now, utc_ms, verdict, candidate ? &*candidate : nullptr);
  if (tracker_owned(roi)) tracks_.keep_until_ended(track);
  if (better) improved_.push_back(ImprovedFace{track, roi, candidate->quality});
}

void UnknownKeeper::end_buffer(GstBuffer* buffer) {
  const Status readable = crop_improved_faces(
      buffer, info_ ? &*info_ : nullptr, improved_, [](const ImprovedFace&) { return true; },
      [this](const ImprovedFace& face, cv::Mat rgb) { tracks_.set_picture(face.track, std::move(rgb)); });
  if (!readable && !warned_unreadable_)
    report_(true, "Unknown faces are kept without pictures: a frame cannot be read (" + readable.error().message + ").");
  warned_unreadable_ = warned_unreadable_ || !readable;
  improved_.clear();
}

void UnknownKeeper::end_tracks(std::span<const std::int64_t> ids, const std::string& stream) {
  hand_over(tracks_.end_tracks(ids), stream);
}

void UnknownKeeper::end_all(const std::string& stream) {
  improved_.clear();
  hand_over(tracks_.end_all(), stream);
}

void UnknownKeeper::stop(const std::string& stream) {
  end_all(stream);
  writer_.drain(kDrainMs);
}

void UnknownKeeper::hand_over(std::vector<EndedUnknown> ended, const std::string& stream) {
  for (EndedUnknown& e : ended) {
    e.face.stream = stream;
    writer_.submit(std::move(e.face), std::move(e.rgb));
  }
}

}  // namespace taconite::gst
