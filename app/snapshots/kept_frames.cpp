#include "kept_frames.hpp"

#include <gst/taconite/gsttaconiteroi.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "frame_view.hpp"
#include "readable_frame.hpp"
#include "rgb_conversion.hpp"

namespace taconite::app {

std::vector<KeptFace> tracked_faces(GstBuffer* buffer) {
  std::vector<KeptFace> faces;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    const auto* roi = reinterpret_cast<const GstVideoRegionOfInterestMeta*>(meta);
    gint64 id = 0;
    if (!gst_taconite_roi_get_track_id(roi, &id)) continue;
    const gchar* uid = gst_taconite_roi_get_track_uid(roi);
    faces.push_back({id, uid ? uid : "",
                     cv::Rect(static_cast<int>(std::min<guint>(roi->x, G_MAXINT / 2)),
                              static_cast<int>(std::min<guint>(roi->y, G_MAXINT / 2)),
                              static_cast<int>(std::min<guint>(roi->w, G_MAXINT / 2)),
                              static_cast<int>(std::min<guint>(roi->h, G_MAXINT / 2)))});
    if (faces.size() >= 1024) break;  // a frame of hostile metadata stays bounded
  }
  return faces;
}

KeptFrames::KeptFrames(int max_width, double keep_per_second, std::size_t max_frames, std::size_t max_tracks)
    : max_width_(max_width),
      keep_interval_(std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / keep_per_second))),
      max_frames_(max_frames),
      max_tracks_(max_tracks) {}

std::string KeptFrames::key(const std::string& uid, std::int64_t track_id) {
  return uid.empty() ? "#" + std::to_string(track_id) : uid;
}

bool KeptFrames::offer(GstBuffer* buffer, const GstVideoInfo& info) {
  try {
    std::vector<KeptFace> faces = tracked_faces(buffer);
    if (faces.empty()) return false;
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mutex_);
      const bool due = now - last_kept_ >= keep_interval_;
      const bool unseen = std::any_of(faces.begin(), faces.end(), [&](const KeptFace& f) {
        auto it = tracks_.find(key(f.uid, f.track_id));
        return it == tracks_.end() || it->second.expired();
      });
      if (!due && !unseen) return false;
    }
    gst::ReadableFrame mapped;
    if (!mapped.map(info, buffer)) return false;
    const int width = GST_VIDEO_INFO_WIDTH(&info), height = GST_VIDEO_INFO_HEIGHT(&info);
    if (width <= 0 || height <= 0) return false;
    const double scale = std::min(1.0, static_cast<double>(max_width_) / std::max(width, height));
    const cv::Size size(std::max(1, static_cast<int>(std::lround(width * scale))),
                        std::max(1, static_cast<int>(std::lround(height * scale))));
    auto frame = std::make_shared<KeptFrame>();
    frame->rgb = vision::scaled_frame_rgb(mapped.view(), size);
    mapped.unmap();
    if (frame->rgb.empty()) return false;
    const cv::Rect bounds(0, 0, size.width, size.height);
    for (KeptFace& f : faces) {
      const double sx = static_cast<double>(size.width) / width, sy = static_cast<double>(size.height) / height;
      f.box =
          cv::Rect(static_cast<int>(f.box.x * sx), static_cast<int>(f.box.y * sy),
                   std::max(1, static_cast<int>(f.box.width * sx)), std::max(1, static_cast<int>(f.box.height * sy))) &
          bounds;
    }
    frame->faces = std::move(faces);
    std::lock_guard lock(mutex_);
    last_kept_ = now;
    std::shared_ptr<const KeptFrame> kept = std::move(frame);
    for (const KeptFace& f : kept->faces) tracks_[key(f.uid, f.track_id)] = kept;
    recent_.push_back(std::move(kept));
    if (recent_.size() > max_frames_) recent_.erase(recent_.begin());
    if (tracks_.size() > max_tracks_) {
      // Tracks whose copies are gone go first; then any, until the bound holds.
      std::erase_if(tracks_, [](const auto& entry) { return entry.second.expired(); });
      while (tracks_.size() > max_tracks_) tracks_.erase(tracks_.begin());
    }
    return true;
  } catch (const std::exception&) {  // std::bad_alloc, cv::Exception: this frame is not kept
    return false;
  }
}

std::optional<KeptFrames::Found> KeptFrames::find(const std::string& uid, std::int64_t track_id) const {
  std::lock_guard lock(mutex_);
  // By uid (taconitetrack's, on the ROIs and in the events); else by id (ROIs without a uid, whose
  // events carry taconitepublish's own uid).
  for (const std::string& k : {key(uid, track_id), key("", track_id)}) {
    auto it = tracks_.find(k);
    if (it == tracks_.end()) continue;
    std::shared_ptr<const KeptFrame> frame = it->second.lock();
    if (!frame) continue;
    for (const KeptFace& f : frame->faces)
      if (key(f.uid, f.track_id) == k) return Found{frame, f};
  }
  return std::nullopt;
}

void KeptFrames::forget(const std::string& uid, std::int64_t track_id) {
  std::lock_guard lock(mutex_);
  tracks_.erase(key(uid, track_id));
  tracks_.erase(key("", track_id));
}

void KeptFrames::clear() {
  std::lock_guard lock(mutex_);
  recent_.clear();
  tracks_.clear();
}

}  // namespace taconite::app
