// The frames a camera's snapshots are made from: copies (downscaled, RGB) of recent frames that
// showed tracked faces, with those faces' boxes. Filled on the streaming thread, read on the main
// loop thread: every call is safe from any thread. Memory is bounded by max_frames copies of at
// most max_width x max_width pixels a camera.
#pragma once

#include <gst/video/video.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <opencv2/core.hpp>
#include <optional>
#include <string>
#include <vector>

namespace taconite::app {

struct KeptFace {
  std::int64_t track_id = 0;
  std::string uid;  // "" when the ROI carries none
  cv::Rect box;     // in the kept copy's pixels
};

struct KeptFrame {
  cv::Mat rgb;  // the copy, at most max_width wide and high
  std::vector<KeptFace> faces;
};

// The tracked faces of a buffer's ROIs (box in the frame's pixels); empty when none has a track id.
std::vector<KeptFace> tracked_faces(GstBuffer* buffer);

class KeptFrames {
 public:
  KeptFrames(int max_width, double keep_per_second, std::size_t max_frames, std::size_t max_tracks);

  // Keeps a copy of the frame when it shows tracks and either the last copy is older than
  // 1/keep_per_second or it shows a track with no copy yet. Returns whether it kept one. Never
  // throws; a frame that does not map or convert is skipped.
  bool offer(GstBuffer* buffer, const GstVideoInfo& info);
  // The newest copy showing the track (by uid, else by id) and that face; nullopt when none is alive.
  struct Found {
    std::shared_ptr<const KeptFrame> frame;
    KeptFace face;
  };
  std::optional<Found> find(const std::string& uid, std::int64_t track_id) const;
  // Forgets a track (its end was handled).
  void forget(const std::string& uid, std::int64_t track_id);
  // Drops every copy (the camera stopped).
  void clear();

 private:
  static std::string key(const std::string& uid, std::int64_t track_id);
  const int max_width_;
  const std::chrono::nanoseconds keep_interval_;
  const std::size_t max_frames_, max_tracks_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const KeptFrame>> recent_;  // newest last, at most max_frames_
  std::map<std::string, std::weak_ptr<const KeptFrame>> tracks_;
  std::chrono::steady_clock::time_point last_kept_{};
};

}  // namespace taconite::app
