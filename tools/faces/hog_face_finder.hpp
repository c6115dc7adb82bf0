// Faces found as the stock front end finds them (facedetect-like dlib HOG, then taconitelandmarks'
// dlib 68 points reduced to the template's 5), aligned to the model's template.
#pragma once

#include <memory>
#include <string>

#include "face_finder.hpp"

namespace taconite::faces {

class HogFaceFinder final : public FaceFinder {
 public:
  HogFaceFinder(std::shared_ptr<const vision::LandmarkModel> landmarks, const ModelInput& input);
  ~HogFaceFinder() override;

  // Images whose longer side is at most kUpscaleBelow pixels are searched at twice their size:
  // HOG finds faces of ~80 pixels and up, upscaled ~40 (opencv-doc's messi5.jpg shows a 38-pixel face).
  Result<std::vector<vision::FaceBox>> find(const cv::Mat& bgr) override;
  Result<cv::Mat> aligned_face(std::size_t index) override;

  static constexpr int kUpscaleBelow = 1024;

 private:
  std::shared_ptr<const vision::LandmarkModel> landmarks_;
  vision::FaceDetector detector_;
  cv::Mat searched_;                         // the (possibly upscaled) image
  std::vector<vision::FaceBox> found_;       // in searched_'s pixels
};

// A HogFaceFinder with the dlib 68-point model `landmarks_model`. In a build without dlib
// (-Ddlib=disabled: hog_unavailable.cpp, no HogFaceFinder) an Input error naming the other front ends.
Result<std::unique_ptr<FaceFinder>> load_hog_face_finder(const std::string& landmarks_model, const ModelInput& input);

}  // namespace taconite::faces
