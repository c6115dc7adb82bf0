// A photo that already is an aligned face of the model's input size (taconitepublish's best faces,
// <stream>-<uid>.jpg, are 112x112 faces warped to the template): the whole image is the one face,
// embedded as it is, without detection.
#pragma once

#include "face_finder.hpp"

namespace taconite::faces {

class AlignedFaceFinder final : public FaceFinder {
 public:
  explicit AlignedFaceFinder(const ModelInput& input) : FaceFinder(input) {}

  // One face, the whole image; an input error for an image of another size than the model's input.
  Result<std::vector<vision::FaceBox>> find(const cv::Mat& bgr) override;
  Result<cv::Mat> aligned_face(std::size_t index) override;

 private:
  cv::Mat rgb_;  // released before each find(): a face handed out keeps its pixels
};

}  // namespace taconite::faces
