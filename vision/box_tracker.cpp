#include "box_tracker.hpp"

#include <dlib/optimization/max_cost_assignment.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace taconite::vision {

namespace {

// Kalman state: centre x, centre y, width, height and their velocities per frame; measured: the
// first four. Noise scales with the box height (as DeepSORT does), so near and far faces behave alike.
constexpr int kState = 8;
constexpr int kMeasured = 4;
constexpr float kPositionNoise = 1.0f / 20;  // per pixel of box height
constexpr float kVelocityNoise = 1.0f / 160;
// IoU as an integer profit for the assignment.
constexpr double kIouScale = 10000.0;

// The optimal assignment of `rows` (tracks) to `cols` (boxes) by profit[row][col] (0: never paired),
// as (row, col) pairs. Rows and columns without any profitable pair stay out of the square matrix,
// so it is at most max(tracks, boxes) wide.
std::vector<std::pair<std::size_t, std::size_t>> assign(const std::vector<std::vector<long>>& profit,
                                                        const std::vector<std::size_t>& candidate_rows,
                                                        const std::vector<std::size_t>& candidate_cols) {
  std::vector<std::size_t> rows, cols;
  std::vector<bool> col_used(candidate_cols.size(), false);
  for (std::size_t r : candidate_rows) {
    bool any = false;
    for (std::size_t c = 0; c < candidate_cols.size(); ++c) {
      if (profit[r][candidate_cols[c]] == 0) continue;
      any = true;
      col_used[c] = true;
    }
    if (any) rows.push_back(r);
  }
  for (std::size_t c = 0; c < candidate_cols.size(); ++c)
    if (col_used[c]) cols.push_back(candidate_cols[c]);

  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  if (rows.empty()) return pairs;
  const long n = static_cast<long>(std::max(rows.size(), cols.size()));
  dlib::matrix<long> cost = dlib::zeros_matrix<long>(n, n);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < cols.size(); ++c)
      cost(static_cast<long>(r), static_cast<long>(c)) = profit[rows[r]][cols[c]];
  const std::vector<long> assignment = dlib::max_cost_assignment(cost);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto c = static_cast<std::size_t>(assignment[r]);
    if (c < cols.size() && profit[rows[r]][cols[c]] != 0) pairs.emplace_back(rows[r], cols[c]);
  }
  return pairs;
}

cv::Vec4d measurement_vector(const Box& box) {
  return {box.x + box.width / 2, box.y + box.height / 2, box.width, box.height};
}

float box_height(const cv::Mat& state) { return std::max(state.at<float>(3), 1.0f); }

void set_noise(cv::Mat& covariance, float height, float position_scale, float velocity_scale) {
  covariance = cv::Mat::zeros(covariance.rows, covariance.cols, CV_32F);
  for (int i = 0; i < covariance.rows; ++i) {
    const float sigma = (i < kMeasured ? position_scale : velocity_scale) * height;
    covariance.at<float>(i, i) = sigma * sigma;
  }
}

Box box_of(const cv::Mat& state) {
  const double width = std::max(state.at<float>(2), 1.0f);
  const double height = std::max(state.at<float>(3), 1.0f);
  return {state.at<float>(0) - width / 2, state.at<float>(1) - height / 2, width, height};
}

cv::Mat measurement_of(const Box& box) {
  return (cv::Mat_<float>(kMeasured, 1) << static_cast<float>(box.x + box.width / 2),
          static_cast<float>(box.y + box.height / 2), static_cast<float>(box.width), static_cast<float>(box.height));
}

}  // namespace

BoxTracker::Track BoxTracker::start_track(const Box& box) const {
  Track track;
  cv::KalmanFilter& f = track.filter;
  f.init(kState, kMeasured, 0, CV_32F);
  cv::setIdentity(f.transitionMatrix);
  for (int i = 0; i < kMeasured; ++i) f.transitionMatrix.at<float>(i, i + kMeasured) = 1.0f;
  cv::setIdentity(f.measurementMatrix);  // 4x8: the first four state entries
  f.statePost = cv::Mat::zeros(kState, 1, CV_32F);
  measurement_of(box).copyTo(f.statePost.rowRange(0, kMeasured));
  // Unknown velocity at first: a wide prior, so the first matches set it.
  set_noise(f.errorCovPost, static_cast<float>(box.height), 2 * kPositionNoise, 10 * kVelocityNoise);
  track.predicted = track.visible = box;
  track.measured = box;
  track.hits = 1;
  return track;
}

void BoxTracker::predict(Track& track, const TrackerPolicy& policy) const {
  cv::KalmanFilter& f = track.filter;
  set_noise(f.processNoiseCov, box_height(f.statePost), kPositionNoise, kVelocityNoise);
  track.predicted = box_of(f.predict());  // OpenCV keeps the predicted covariance as the posterior too,
                                          // so it grows over frames without a measurement
  if (!policy.motion_gate) return;
  // Innovation covariance S = H P H^T + R: H takes the first four state entries; R is the
  // measurement noise the next correction uses (for the predicted height).
  cv::Matx44d s;
  const double sigma = policy.measurement_noise * box_height(f.statePre);
  for (int i = 0; i < kMeasured; ++i)
    for (int j = 0; j < kMeasured; ++j)
      s(i, j) = f.errorCovPre.at<float>(i, j) + (i == j ? sigma * sigma : 0.0);
  track.gate_inverse = s.inv(cv::DECOMP_CHOLESKY);
}

long BoxTracker::profit(const Track& track, const Box& box, const TrackerPolicy& policy) const {
  const double overlap = iou(track.visible, box);
  const bool overlapping = overlap > 0.0 && overlap >= policy.iou_threshold;
  if (!policy.motion_gate) return overlapping ? std::max(1L, std::lround(overlap * kIouScale)) : 0;
  const cv::Vec4d innovation = measurement_vector(box) - measurement_vector(track.visible);
  const double distance = innovation.dot(track.gate_inverse * innovation);  // squared Mahalanobis
  if (!(distance <= kMotionGate)) return 0;                                  // NaN included
  if (overlapping) return std::max(1L, std::lround(overlap * kIouScale));
  if (track.missed == 0) return 0;
  // A lost track back near its prediction: worth less than any overlapping pair.
  return std::max(1L, std::lround(policy.iou_threshold * (1.0 - distance / kMotionGate) * kIouScale));
}

void BoxTracker::confirm(Track& track, const TrackerPolicy& policy) {
  if (track.id || track.hits < policy.min_hits || ids_exhausted()) return;
  track.id = next_id_++;
}

void BoxTracker::ended(const Track& track) {
  if (track.id) ended_.push_back(*track.id);  // an unconfirmed track was never announced
}

void BoxTracker::clear_tracks() {
  for (const Track& track : tracks_) ended(track);
  tracks_.clear();
}

void BoxTracker::drop_longest_lost(std::size_t keep) {
  while (tracks_.size() > keep) {
    auto lost = std::max_element(tracks_.begin(), tracks_.end(),
                                 [](const Track& a, const Track& b) { return a.missed < b.missed; });
    ended(*lost);
    tracks_.erase(lost);
  }
}

std::vector<std::optional<std::int64_t>> BoxTracker::update_boxes(const std::vector<Box>& boxes,
                                                                  const TrackerPolicy& policy) {
  std::vector<Detection> detections(boxes.size());
  std::transform(boxes.begin(), boxes.end(), detections.begin(), [](const Box& b) { return Detection{b}; });
  const std::vector<TrackResult> results = update(detections, policy);
  std::vector<std::optional<std::int64_t>> ids(results.size());
  std::transform(results.begin(), results.end(), ids.begin(), [](const TrackResult& r) { return r.id; });
  return ids;
}

std::vector<TrackResult> BoxTracker::update(const std::vector<Detection>& detections, const TrackerPolicy& policy,
                                            const std::optional<Box>& frame) {
  drop_longest_lost(policy.max_tracks);  // the cap may have been lowered

  std::vector<std::size_t> all_tracks, tracked;  // tracked: matched in the previous frame
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    if (tracks_[t].missed == 0) tracked.push_back(t);
    all_tracks.push_back(t);
    predict(tracks_[t], policy);
    tracks_[t].visible = frame ? inside(tracks_[t].predicted, *frame).value_or(tracks_[t].predicted) : tracks_[t].predicted;
  }

  std::vector<std::size_t> high, low, stale;
  for (std::size_t d = 0; d < detections.size(); ++d) {
    const Detection& detection = detections[d];
    if (!detection.fresh)
      stale.push_back(d);
    else if (detection.confidence >= policy.track_threshold)
      high.push_back(d);
    else if (detection.confidence >= policy.low_threshold)
      low.push_back(d);
  }
  const bool measured = stale.empty() || stale.size() < detections.size();  // a detector ran on this frame

  std::vector<std::vector<long>> profits(tracks_.size(), std::vector<long>(detections.size(), 0));
  for (std::size_t t = 0; t < tracks_.size(); ++t)
    for (std::size_t d = 0; d < detections.size(); ++d)
      if (detections[d].fresh) profits[t][d] = profit(tracks_[t], detections[d].box, policy);

  std::vector<std::optional<std::size_t>> track_of(detections.size());
  std::vector<bool> matched(tracks_.size(), false);
  const auto take = [&](const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
    for (const auto& [t, d] : pairs) {
      track_of[d] = t;
      matched[t] = true;
    }
  };
  take(assign(profits, all_tracks, high));
  std::erase_if(tracked, [&](std::size_t t) { return matched[t]; });
  take(assign(profits, tracked, low));

  // Stale boxes: the box each track was last measured at, carried by the detector.
  if (!stale.empty()) {
    std::vector<std::size_t> free_tracks;
    for (std::size_t t = 0; t < tracks_.size(); ++t) {
      if (matched[t]) continue;
      free_tracks.push_back(t);
      for (std::size_t d : stale) {
        const double overlap = iou(tracks_[t].measured, detections[d].box);
        if (overlap > 0.0 && overlap >= policy.iou_threshold)
          profits[t][d] = std::max(1L, std::lround(overlap * kIouScale));
      }
    }
    take(assign(profits, free_tracks, stale));
  }

  std::vector<TrackResult> results(detections.size());
  for (std::size_t d = 0; d < detections.size(); ++d) {
    if (!track_of[d]) {
      results[d].drop = !detections[d].fresh;  // carried, and no track to predict it from
      continue;
    }
    Track& track = tracks_[*track_of[d]];
    if (detections[d].fresh) {
      const Box& box = detections[d].box;
      set_noise(track.filter.measurementNoiseCov, static_cast<float>(box.height),
                static_cast<float>(policy.measurement_noise), 0.0f);
      track.filter.correct(measurement_of(box));
      track.measured = box;
      track.hits = std::min(track.hits + 1, std::max<std::uint64_t>(policy.min_hits, 1));
      track.missed = 0;
      confirm(track, policy);
    } else if (frame && !inside(track.predicted, *frame)) {
      results[d].drop = true;  // the face has left the frame: held, but nothing of it to show
      continue;
    } else {
      results[d].predicted = track.predicted;  // held: neither a hit nor a miss
    }
    results[d].id = track.id;  // before the vector changes below
  }
  if (measured)
    for (std::size_t t = 0; t < tracks_.size(); ++t)
      if (!matched[t]) ++tracks_[t].missed;

  // A confirmed track survives max_age missed frames; an unconfirmed one ends at its first miss, so
  // a flickering false detection never builds up to min_hits.
  std::erase_if(tracks_, [&](const Track& t) {
    const bool gone = t.missed > (t.id ? policy.max_age : 0);
    if (gone) ended(t);
    return gone;
  });
  for (std::size_t d : high) {
    if (track_of[d]) continue;
    // A new track; when full, it replaces the longest-lost one (never one matched in this frame).
    Track* slot = nullptr;
    if (tracks_.size() < policy.max_tracks) {
      slot = &tracks_.emplace_back();
    } else {
      auto lost = std::max_element(tracks_.begin(), tracks_.end(),
                                   [](const Track& x, const Track& y) { return x.missed < y.missed; });
      if (lost == tracks_.end() || lost->missed == 0) continue;  // no room: this box gets no id
      ended(*lost);
      slot = &*lost;
    }
    *slot = start_track(detections[d].box);
    confirm(*slot, policy);
    results[d].id = slot->id;
  }
  return results;
}

}  // namespace taconite::vision
