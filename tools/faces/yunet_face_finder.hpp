// Faces found as taconitedetect finds them (YuNet with its default options, boxes clipped to the
// image) and aligned from YuNet's 5 points as taconiteadaface aligns a ROI's landmarks
// (vision::checked_alignment).
#pragma once

#include <memory>
#include <string>

#include "face_finder.hpp"
#include "yunet_detector.hpp"

namespace taconite::faces {

class YuNetFaceFinder final : public FaceFinder {
 public:
  // The detector loaded from `model_path` with taconitedetect's default options and `threads`
  // threads (OpenCV's count is process-wide), or an error naming the file and what is wrong.
  static Result<std::unique_ptr<YuNetFaceFinder>> load(const std::string& model_path, const ModelInput& input,
                                                       int threads = 1);

  Result<std::vector<vision::FaceBox>> find(const cv::Mat& bgr) override;
  Result<cv::Mat> aligned_face(std::size_t index) override;

 private:
  YuNetFaceFinder(std::unique_ptr<vision::YuNetDetector> detector, const ModelInput& input);
  std::unique_ptr<vision::YuNetDetector> detector_;
  cv::Mat image_;
  std::vector<vision::DetectedFace> found_;  // largest first, as find() returned them
};

}  // namespace taconite::faces
