// Best-shot quality of a face, before and after embedding (plain numbers, no GStreamer).
//
// Before embedding, three cues at hand, each mapped to 0..1 (1 = as good as it gets):
//  - size: the inter-ocular distance (5 or 2 landmarks) relative to the 112x112 template's
//    (35.2 px), else the box width relative to 112: below 1 the network sees an upscaled face;
//  - pose: yaw from the nose's offset between the eyes, pitch from the nose's height between the
//    eye line and the mouth line (both compared with the template), roll from the eye line; yaw
//    and pitch cost quadratically, roll only past 30 degrees (the alignment undoes roll);
//  - sharpness: the variance of the Laplacian of the luma of the exact 112x112 input the network
//    gets (so the measure does not depend on the face's size in the frame), v / (v + 100).
// They are combined as a weighted geometric mean, size^0.3 * pose^0.4 * sharpness^0.3: a face
// that fails any one cue (tiny, profile, motion-blurred) is a bad shot whatever the others say,
// which a weighted sum would hide. After embedding, AdaFace's feature norm (the paper's image
// quality proxy) is standardised against the stream's running mean and deviation, as AdaFace does
// with its batch statistics, and scales the score between 0.5x and 1x (docs/gstreamer.md).
#pragma once

#include <opencv2/core/types.hpp>

#include <optional>
#include <span>

#include "pixel_normalisation.hpp"

namespace taconite::vision {

// Head pose estimated from 5 landmarks, degrees (0 = frontal). Rough: 5 points give yaw and roll
// well, pitch only coarsely.
struct FacePose {
  double yaw = 0.0;    // positive: nose towards the image's right eye
  double pitch = 0.0;  // positive: nose lower than the template's (face looking down)
  double roll = 0.0;   // eye line's angle to the horizontal
};

struct FaceQuality {
  double score = 0.0;  // the combination of the parts below, 0..1
  double size = 0.0;
  double pose = 0.0;
  double sharpness = 0.0;
  std::optional<FacePose> angles;  // with 5 landmarks only
};

// The landmarks in the template's order (image-left eye, image-right eye, nose, mouth corners) in
// frame pixels, or none. Five points give the pose; two (the eyes) only the size and roll.
std::optional<FacePose> estimate_pose(std::span<const cv::Point2d> five);

// 0..1 cues; see the header comment.
double size_score(double box_width, std::span<const cv::Point2d> landmarks);
double pose_score(const FacePose& pose);
double sharpness_score(double laplacian_variance);

// The variance of the Laplacian of the luma of a network input: `chw` holds 3 planes of
// width x height normalised with `norm` (the model's; the luma is measured in 8-bit units), in any
// channel order. 0 for an empty or mis-sized input.
double laplacian_variance(std::span<const float> chw, int width, int height, const PixelNormalisation& norm);

// The pre-embedding quality of a face: its box width, its landmarks (0, 2 or 5 points) and the
// network input prepared for it (normalised with `norm`).
FaceQuality assess_face(double box_width, std::span<const cv::Point2d> landmarks, std::span<const float> chw,
                        int width, int height, const PixelNormalisation& norm);

// Running mean and deviation of the embedding norms of a stream (exponential, like AdaFace's
// batch statistics), and the 0.5..1 factor a norm gives a pre-embedding score.
class NormStatistics {
 public:
  void add(double norm);
  // 0.75 (neutral) until ten norms were seen or while they are all equal; else
  // 0.75 + 0.25 * clip((norm - mean) / deviation, -1, 1).
  double factor(double norm) const;
  void clear() { *this = NormStatistics(); }

 private:
  double mean_ = 0.0, variance_ = 0.0;
  unsigned count_ = 0;
};

}  // namespace taconite::vision
