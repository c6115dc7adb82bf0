// A detector run on one frame in `interval`, its faces carried over the frames in between
// (taconitedetect's `interval`, taconitelandmarks' `detect-interval`). Plain state, no GStreamer.
#pragma once

#include <utility>
#include <vector>

namespace taconite::vision {

template <typename Face>
class CarriedDetections {
 public:
  // Whether this frame must run the detector: the first frame, and once `interval` frames have
  // passed since the last detection. The interval is this frame's, so a change applies at once
  // (lowered from 1000 to 1, the next frame detects).
  bool due(unsigned interval) const { return !detected_ || frames_since_ >= interval; }
  // Records the faces detected on this frame: they are carried until the detector is due again.
  void detected(std::vector<Face> faces) {
    faces_ = std::move(faces);
    detected_ = true;
    frames_since_ = 0;
  }
  // This frame's faces; call once per frame, after detected() when due().
  const std::vector<Face>& take() {
    if (detected_ && frames_since_ < kMaxCount) ++frames_since_;
    return faces_;
  }
  // Forgets the faces (a flush, a new stream, another frame size): the next frame detects.
  void reset() {
    detected_ = false;
    frames_since_ = 0;
    faces_.clear();
  }

 private:
  static constexpr unsigned kMaxCount = ~0u;  // saturates: no wrap-around on endless streams
  bool detected_ = false;
  unsigned frames_since_ = 0;
  std::vector<Face> faces_;
};

}  // namespace taconite::vision
