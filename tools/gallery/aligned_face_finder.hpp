// A photo that already is an aligned face of the model's input size (taconitepublish's best faces,
// <stream>-<uid>.jpg, are 112x112 faces warped to the template): the whole image is the one face,
// embedded as it is, without detection.
#pragma once

#include "face_finder.hpp"

namespace taconite::gallery_cli {

class AlignedFaceFinder final : public FaceFinder {
 public:
  explicit AlignedFaceFinder(const ModelInput& input) : input_(input) {}

  // One face, the whole image; an input error for an image of another size than the model's input.
  Result<std::vector<vision::FaceBox>> find(const cv::Mat& bgr) override;
  gallery::Status model_input(std::size_t index, std::vector<float>& chw) override;

 private:
  ModelInput input_;
  cv::Mat rgb_;
};

}  // namespace taconite::gallery_cli
