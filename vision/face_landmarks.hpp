// dlib's 68-point shape predictor and HOG frontal-face detector on the gray (luma) pixels of an
// image (image_view.hpp). dlib stays behind this header: its users never see its types.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "image_view.hpp"
#include "similarity_alignment.hpp"
#include "taconite/error.hpp"

namespace taconite::vision {

// A face box in image pixels; 64-bit because a ROI box may reach far outside the image.
struct FaceBox {
  std::int64_t x = 0, y = 0, width = 0, height = 0;
};

// The 68 points of dlib's iBUG 300-W markup, in image pixels, and the alignment template's 5
// derived from them (eye centres = means of the eye contours 36-41 and 42-47, nose tip 30, mouth
// corners 48 and 54; image-left first, the order of similarity_alignment.hpp).
struct FaceLandmarks {
  std::array<Point2, 68> points;
  std::array<Point2, 5> five() const;
};

// Most predictions one face's landmarks average (taconitelandmarks' box-samples property).
inline constexpr int kMaxBoxSamples = 5;

// The predictor runs on a gray copy of each face's surroundings in which the box's longer side is
// at most this many pixels (larger faces are scaled down): one prediction's work is bounded
// whatever the box or image size.
inline constexpr int kMaxPredictorBoxSide = 320;

// The detector runs on at most this many pixels (4K UHD): larger images are scaled down further
// than detect-scale asks.
inline constexpr std::int64_t kMaxDetectPixels = 3840 * 2160;

// A loaded shape predictor. Its predict() is const and keeps no state, so one model may serve
// several streaming threads.
class LandmarkModel {
 public:
  // Loads a dlib shape_predictor file, or an error naming the file and what is wrong: Io when it is
  // missing or unreadable, Input when no file is set or it is not a 68-point shape predictor.
  // Never throws.
  static Result<std::shared_ptr<const LandmarkModel>> load(const std::string& path);
  ~LandmarkModel();

  // The landmarks of the face in `box` on an image of any format, found on a gray
  // copy of the box's surroundings (at most kMaxPredictorBoxSide for the box; limited-range luma
  // expanded to full range). Faces tilted by more than 10 degrees are predicted again on an upright copy of their
  // surroundings. `samples` (1..kMaxBoxSamples) > 1 averages the predictions on the box and on
  // samples - 1 copies shifted by 6 % of its size: steadier points for that many times the work.
  FaceLandmarks predict(const ImageView& image, const FaceBox& box, int samples = 1) const;

 private:
  FaceLandmarks predict_upright(const ImageView& image, const FaceBox& box) const;
  FaceLandmarks predict_derotated(const ImageView& image, const FaceBox& box, double tilt) const;

  struct Impl;
  explicit LandmarkModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A detection of dlib's HOG frontal-face detector: the box in image pixels (not clipped) and its
// SVM score.
struct FaceDetection {
  FaceBox box;
  double confidence = 0.0;
};

// dlib's HOG frontal-face detector (one per streaming thread: dlib's detector is not reentrant).
class FaceDetector {
 public:
  FaceDetector();
  ~FaceDetector();
  FaceDetector(const FaceDetector&) = delete;
  FaceDetector& operator=(const FaceDetector&) = delete;

  // The faces on an image, found on its gray copy scaled by `scale` (0 < scale <= 1), or
  // further down to kMaxDetectPixels. Finds faces of about 80/scale pixels and up.
  std::vector<FaceDetection> detect(const ImageView& image, double scale);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace taconite::vision
