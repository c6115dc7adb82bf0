#include "box_tracker.hpp"

#include <dlib/optimization/max_cost_assignment.h>

#include <algorithm>
#include <cmath>

namespace taconite::gst {

namespace {

// Kalman state: centre x, centre y, width, height and their velocities per frame; measured: the
// first four. Noise scales with the box height (as DeepSORT does), so near and far faces behave alike.
constexpr int kState = 8;
constexpr int kMeasured = 4;
constexpr float kPositionNoise = 1.0f / 20;  // per pixel of box height
constexpr float kVelocityNoise = 1.0f / 160;
// IoU as an integer profit for the assignment.
constexpr double kIouScale = 10000.0;

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

double iou(const Box& a, const Box& b) {
  const double w = std::min(a.x + a.width, b.x + b.width) - std::max(a.x, b.x);
  const double h = std::min(a.y + a.height, b.y + b.height) - std::max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0.0;
  const double overlap = w * h;
  return overlap / (a.width * a.height + b.width * b.height - overlap);
}

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
  track.predicted = box;
  track.hits = 1;
  return track;
}

void BoxTracker::confirm(Track& track, const TrackerPolicy& policy) {
  if (track.id || track.hits < policy.min_hits || ids_exhausted()) return;
  track.id = next_id_++;
}

void BoxTracker::drop_longest_lost(std::size_t keep) {
  while (tracks_.size() > keep) {
    auto lost = std::max_element(tracks_.begin(), tracks_.end(),
                                 [](const Track& a, const Track& b) { return a.missed < b.missed; });
    tracks_.erase(lost);
  }
}

std::vector<std::optional<std::int64_t>> BoxTracker::update(const std::vector<Box>& boxes,
                                                            const TrackerPolicy& policy) {
  drop_longest_lost(policy.max_tracks);  // the cap may have been lowered

  for (Track& track : tracks_) {
    cv::KalmanFilter& f = track.filter;
    set_noise(f.processNoiseCov, box_height(f.statePost), kPositionNoise, kVelocityNoise);
    track.predicted = box_of(f.predict());
  }

  // Gated IoU profits: pairs below the threshold are worth nothing, so they never displace a
  // valid pair; tracks and boxes without any valid pair stay out of the (square) matrix.
  std::vector<std::vector<long>> profit(tracks_.size(), std::vector<long>(boxes.size(), 0));
  std::vector<std::size_t> rows, cols;
  std::vector<bool> col_used(boxes.size(), false);
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    bool any = false;
    for (std::size_t b = 0; b < boxes.size(); ++b) {
      const double overlap = iou(tracks_[t].predicted, boxes[b]);
      if (overlap <= 0.0 || overlap < policy.iou_threshold) continue;
      profit[t][b] = std::max(1L, std::lround(overlap * kIouScale));
      any = true;
      col_used[b] = true;
    }
    if (any) rows.push_back(t);
  }
  for (std::size_t b = 0; b < boxes.size(); ++b)
    if (col_used[b]) cols.push_back(b);

  std::vector<std::optional<std::size_t>> track_of_box(boxes.size());
  std::vector<bool> matched(tracks_.size(), false);
  if (!rows.empty()) {
    const long n = static_cast<long>(std::max(rows.size(), cols.size()));
    dlib::matrix<long> cost = dlib::zeros_matrix<long>(n, n);
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t c = 0; c < cols.size(); ++c)
        cost(static_cast<long>(r), static_cast<long>(c)) = profit[rows[r]][cols[c]];
    const std::vector<long> assignment = dlib::max_cost_assignment(cost);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const auto c = static_cast<std::size_t>(assignment[r]);
      if (c >= cols.size() || profit[rows[r]][cols[c]] == 0) continue;
      track_of_box[cols[c]] = rows[r];
      matched[rows[r]] = true;
    }
  }

  for (std::size_t b = 0; b < boxes.size(); ++b) {
    if (!track_of_box[b]) continue;
    Track& track = tracks_[*track_of_box[b]];
    set_noise(track.filter.measurementNoiseCov, static_cast<float>(boxes[b].height), kPositionNoise, 0.0f);
    track.filter.correct(measurement_of(boxes[b]));
    track.hits = std::min(track.hits + 1, std::max<std::uint64_t>(policy.min_hits, 1));
    track.missed = 0;
    confirm(track, policy);
  }
  for (std::size_t t = 0; t < tracks_.size(); ++t)
    if (!matched[t]) ++tracks_[t].missed;

  std::vector<std::optional<std::int64_t>> ids(boxes.size());
  for (std::size_t b = 0; b < boxes.size(); ++b)
    if (track_of_box[b]) ids[b] = tracks_[*track_of_box[b]].id;  // before the vector changes below

  // A confirmed track survives max_age missed frames; an unconfirmed one ends at its first miss, so
  // a flickering false detection never builds up to min_hits.
  std::erase_if(tracks_, [&](const Track& t) { return t.missed > (t.id ? policy.max_age : 0); });
  for (std::size_t b = 0; b < boxes.size(); ++b) {
    if (track_of_box[b]) continue;
    // A new track; when full, it replaces the longest-lost one (never one matched in this frame).
    Track* slot = nullptr;
    if (tracks_.size() < policy.max_tracks) {
      slot = &tracks_.emplace_back();
    } else {
      auto lost = std::max_element(tracks_.begin(), tracks_.end(),
                                   [](const Track& x, const Track& y) { return x.missed < y.missed; });
      if (lost == tracks_.end() || lost->missed == 0) continue;  // no room: this box gets no id
      slot = &*lost;
    }
    *slot = start_track(boxes[b]);
    confirm(*slot, policy);
    ids[b] = slot->id;
  }
  return ids;
}

}  // namespace taconite::gst
