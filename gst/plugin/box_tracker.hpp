// Multi-object box tracking for taconitetrack (SORT-style): each track's box is predicted by a
// constant-velocity Kalman filter (OpenCV), predictions are matched to the frame's boxes by IoU
// with an optimal assignment (dlib's max_cost_assignment). No GStreamer; one streaming thread.
#pragma once

#include <opencv2/video/tracking.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace taconite::gst {

struct Box {
  double x = 0, y = 0, width = 0, height = 0;  // pixels; width and height > 0
};

// Intersection over union of two boxes (0 when either is empty).
double iou(const Box& a, const Box& b);

struct TrackerPolicy {
  double iou_threshold = 0.3;    // a prediction and a box closer than this are never matched
  std::uint64_t max_age = 30;    // a confirmed track missing from this many consecutive frames survives;
                                 // one more ends it (an unconfirmed track ends at its first miss)
  std::uint64_t min_hits = 3;    // consecutive frames a track must be matched before its id is published
  std::size_t max_tracks = 256;  // live tracks kept; a new one replaces the longest-lost one
};

class BoxTracker {
 public:
  explicit BoxTracker(std::int64_t first_id = 1) : next_id_(first_id) {}

  // Advances one frame with its boxes; returns the published id of each box, in order (none for a
  // track not yet confirmed, or once every 64-bit id was given out).
  std::vector<std::optional<std::int64_t>> update(const std::vector<Box>& boxes, const TrackerPolicy& policy);

  // Forgets every track; ids go on counting, so none is reused.
  void clear_tracks() { tracks_.clear(); }
  // Forgets every track and starts the ids again at `first_id` (a new stream).
  void restart(std::int64_t first_id = 1) {
    tracks_.clear();
    next_id_ = first_id;
  }

  std::size_t size() const { return tracks_.size(); }
  bool ids_exhausted() const { return next_id_ == INT64_MAX; }

 private:
  struct Track {
    cv::KalmanFilter filter;
    Box predicted;
    std::optional<std::int64_t> id;  // given when the track is confirmed (min_hits)
    std::uint64_t hits = 0;          // consecutive matched frames, saturating at min_hits
    std::uint64_t missed = 0;        // consecutive frames without a match
  };

  Track start_track(const Box& box) const;
  void confirm(Track& track, const TrackerPolicy& policy);
  void drop_longest_lost(std::size_t keep);

  std::vector<Track> tracks_;
  std::int64_t next_id_;
};

}  // namespace taconite::gst
