// The per-track best face both taconitepublish (best-face files) and taconiteidentify (unknown faces
// kept for review) keep: one ranking rule, and the list of a buffer's faces that beat their
// track's best, so the frame is read only for those (best_face_crop.hpp). Each element keeps a
// BestQuality in its own per-track record, so a track's best goes when the element ends the track.
#pragma once

#include <gst/video/video.h>

#include <cstdint>
#include <optional>

namespace taconite::gst {

// The quality of a track's best face so far (none before the first).
class BestQuality {
 public:
  // Whether a face of `quality` is better: a finite quality strictly above the best so far (any
  // finite one for the first face). NaN and infinities never rank: they would hold the place for good.
  bool beaten_by(double quality) const;
  // The track's best is now a face of `quality` (one beaten_by() accepted).
  void take(double quality) { best_ = quality; }
  std::optional<double> value() const { return best_; }

 private:
  std::optional<double> best_;
};

// A face of this buffer that beat its track's best: cropped once the buffer's faces are read.
struct ImprovedFace {
  std::int64_t track = 0;
  const GstVideoRegionOfInterestMeta* roi = nullptr;  // the buffer's, valid while it is processed
  double quality = 0.0;
};

}  // namespace taconite::gst
