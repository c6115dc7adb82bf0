// Multi-object box tracking for taconitetrack (ByteTrack-style): each track's box is predicted by
// a constant-velocity Kalman filter (OpenCV) and matched to the frame's boxes with an optimal
// assignment (dlib's max_cost_assignment) in two passes by confidence, inside a motion gate. No
// GStreamer; one streaming thread.
//
// One frame (update):
//  1. Every track's Kalman state advances one frame (predict), so velocities stay per frame and a
//     lost track's covariance grows with every frame it is not measured.
//     Boxes are compared with the prediction clipped to the frame (when update() is given it): a
//     face leaving the frame is detected as its visible part.
//  2. Motion gate (policy.motion_gate): a pair whose squared Mahalanobis distance between the box
//     (centre, width, height) and the track's prediction, under the innovation covariance
//     H P H^T + R, exceeds kMotionGate (the chi-square 95 % quantile for 4 degrees of freedom) is
//     never matched.
//  3. Pass 1: fresh boxes with confidence >= track_threshold against every track. Profit of a pair
//     in the gate: its IoU when that is >= iou_threshold; for a lost track (missed > 0) with less
//     overlap, iou_threshold * (1 - d²/kMotionGate), which is always below any overlap match, so
//     the gate only brings back lost tracks that nothing overlapping claims (a face back from an
//     occlusion near its predicted place). Other pairs: no profit, never matched.
//  4. Pass 2: fresh boxes with confidence in [low_threshold, track_threshold) against the tracks
//     pass 1 left unmatched that were matched in the previous frame, by the same profit. Such boxes
//     never start tracks; below low_threshold a box is ignored. Both get no id when unmatched.
//  5. Stale boxes (Detection::fresh false: a detector's carried box, not a measurement) claim the
//     tracks no fresh box matched whose last measured box overlaps them by >= iou_threshold; they
//     get the track's id and its predicted box. A track so claimed is not missed, and on a frame
//     with stale boxes and no fresh one no track is missed (no detector ran). A stale box that no
//     track claims, or whose track's prediction has less than a pixel inside the frame (the face
//     left it), is to be dropped: a carried box is either predicted or gone, never passed on as
//     if it were a measurement.
//  6. Matched tracks are corrected; the others count a miss. A track matched in min_hits
//     consecutive frames gets its id; an unconfirmed track ends at its first miss, a confirmed one
//     after max_age; unmatched pass-1 boxes start tracks (at most max_tracks are kept).
//     The ids of the confirmed tracks that end (after max_age, replaced or dropped to keep max_tracks,
//     or cleared) are kept for take_ended(), so the caller can say which tracks are gone.
// With track_threshold 0, low_threshold 0, motion_gate false and measurement_noise 1/20 (legacy_policy) every box goes
// through pass 1 by IoU alone: exactly the tracker before the gate and the second pass.
#pragma once

#include <opencv2/video/tracking.hpp>

#include "box_geometry.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace taconite::vision {

// Chi-square 95 % quantile for 4 degrees of freedom: the squared Mahalanobis gate.
inline constexpr double kMotionGate = 9.4877;

struct TrackerPolicy {
  double iou_threshold = 0.3;     // a prediction and a box closer than this are matched only by the gate
  std::uint64_t max_age = 30;     // a confirmed track missing from this many consecutive frames survives;
                                  // one more ends it (an unconfirmed track ends at its first miss)
  std::uint64_t min_hits = 3;     // consecutive frames a track must be matched before its id is published
  std::size_t max_tracks = 256;   // live tracks kept; a new one replaces the longest-lost one
  double track_threshold = 0.5;   // fresh boxes at least this confident: pass 1, may start tracks
  double low_threshold = 0.1;     // from this up to track_threshold: pass 2 only; below: ignored
  bool motion_gate = true;        // gate pairs by the Kalman covariance, match lost tracks inside it
  double measurement_noise = 0.125; // a detector's box error (sigma) per pixel of box height: the Kalman
                                  // filter's R, so the gate admits ordinary detector jitter
};

// The tracker before the motion gate and the second pass (kept to compare against).
inline TrackerPolicy legacy_policy() {
  TrackerPolicy policy;
  policy.track_threshold = 0.0;
  policy.low_threshold = 0.0;
  policy.motion_gate = false;
  policy.measurement_noise = 1.0 / 20;
  return policy;
}

struct Detection {
  Box box;
  double confidence = 1.0;  // 0..1; anything else (NaN included) is below every threshold but 0
  bool fresh = true;        // false: carried from an earlier detection, not a measurement
};

struct TrackResult {
  std::optional<std::int64_t> id;  // none for a track not yet confirmed, or once every 64-bit id was given out
  std::optional<Box> predicted;    // a stale detection claimed by a track: that track's predicted box
                                   // (at least a pixel of it inside the frame)
  bool drop = false;               // a stale detection neither claimed nor predicted inside the frame
};

class BoxTracker {
 public:
  explicit BoxTracker(std::int64_t first_id = 1) : next_id_(first_id) {}

  // Advances one frame with its detections; returns what each got, in order. `frame`: the image's
  // bounds, which a stale detection's prediction must reach into (none: unbounded).
  std::vector<TrackResult> update(const std::vector<Detection>& detections, const TrackerPolicy& policy,
                                  const std::optional<Box>& frame = std::nullopt);
  // The same for fresh, fully confident boxes; returns the published id of each.
  std::vector<std::optional<std::int64_t>> update_boxes(const std::vector<Box>& boxes, const TrackerPolicy& policy);

  // Forgets every track (their ids are ended); ids go on counting, so none is reused.
  void clear_tracks();
  // Forgets every track and starts the ids again at `first_id` (a new stream: nothing is ended).
  void restart(std::int64_t first_id = 1) {
    tracks_.clear();
    ended_.clear();
    next_id_ = first_id;
  }
  // The ids of the confirmed tracks that ended since the last call, in the order they ended.
  std::vector<std::int64_t> take_ended() { return std::exchange(ended_, {}); }

  std::size_t size() const { return tracks_.size(); }
  bool ids_exhausted() const { return next_id_ == INT64_MAX; }

 private:
  struct Track {
    cv::KalmanFilter filter;
    Box predicted;
    Box visible;                     // the prediction clipped to the frame: what a detector sees of it
    Box measured;                    // the last box matched (what a detector carries on stale frames)
    cv::Matx44d gate_inverse;        // inverse innovation covariance of this frame's prediction
    std::optional<std::int64_t> id;  // given when the track is confirmed (min_hits)
    std::uint64_t hits = 0;          // consecutive matched frames, saturating at min_hits
    std::uint64_t missed = 0;        // consecutive frames without a match
  };

  Track start_track(const Box& box) const;
  void predict(Track& track, const TrackerPolicy& policy) const;
  long profit(const Track& track, const Box& box, const TrackerPolicy& policy) const;
  void confirm(Track& track, const TrackerPolicy& policy);
  void drop_longest_lost(std::size_t keep);
  void ended(const Track& track);

  std::vector<Track> tracks_;
  std::vector<std::int64_t> ended_;  // confirmed ids ended, until take_ended()
  std::int64_t next_id_;
};

}  // namespace taconite::vision
