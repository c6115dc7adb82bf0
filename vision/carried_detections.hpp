// A detector run on one frame in `interval`, its faces carried over the frames in between
// (taconitedetect's `interval`, taconitelandmarks' `detect-interval`). Plain state, no GStreamer.
#pragma once

#include <utility>
#include <vector>

namespace taconite::vision {

template <typename Face>
class CarriedDetections {
 public:
  // Whether this frame must run the detector (the first frame, and every `interval`th after).
  bool due() const { return frames_left_ == 0; }
  // Records the faces detected on this frame: they are this frame's and the next interval - 1's.
  void detected(std::vector<Face> faces, unsigned interval) {
    faces_ = std::move(faces);
    frames_left_ = interval;
  }
  // This frame's faces; call once per frame, after detected() when due().
  const std::vector<Face>& take() {
    if (frames_left_ > 0) --frames_left_;
    return faces_;
  }
  // Forgets the faces (a flush, a new stream, another frame size): the next frame detects.
  void reset() {
    frames_left_ = 0;
    faces_.clear();
  }

 private:
  unsigned frames_left_ = 0;
  std::vector<Face> faces_;
};

}  // namespace taconite::vision
