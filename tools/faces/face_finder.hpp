// How a photo's faces are found and one turned into the model's input, shared by taconite-gallery,
// realfaces-bench and the tests so all find faces alike. Three finders, one per front end a
// pipeline has: dlib HOG + 68-point landmarks (hog_face_finder.hpp, as facedetect/
// taconitelandmarks), YuNet with its 5 points (yunet_face_finder.hpp, as taconitedetect), and none
// for a photo that already is an aligned face (aligned_face_finder.hpp, taconitepublish's best
// faces). Every finder aligns as taconiteadaface does.
#pragma once

#include <cstddef>
#include <opencv2/core.hpp>
#include <vector>

#include "face_landmarks.hpp"
#include "gallery_store.hpp"
#include "image_view.hpp"
#include "pixel_normalisation.hpp"

namespace taconite::faces {

// What a finder makes for the model: its input size and normalisation.
struct ModelInput {
  int width = 0, height = 0;
  vision::PixelNormalisation norm;
};

class FaceFinder {
 public:
  virtual ~FaceFinder() = default;
  // The faces of `bgr` (8-bit BGR), largest first, in its pixels. The image must stay alive and
  // unchanged until the next find(): aligned_face() reads it. An input error when the image
  // cannot be searched as this finder needs (an "aligned" photo of another size).
  virtual Result<std::vector<vision::FaceBox>> find(const cv::Mat& bgr) = 0;
  // Face `index` of the last find() warped to the template of the input size: 8-bit RGB with its
  // own pixels (what every model of that size is fed before its own normalisation); an input
  // error when its landmarks give no alignment.
  virtual Result<cv::Mat> aligned_face(std::size_t index) = 0;
  // aligned_face() normalised as the model wants (3 planes of its input size), into `chw`.
  gallery::Status model_input(std::size_t index, std::vector<float>& chw);

 protected:
  explicit FaceFinder(const ModelInput& input) : input_(input) {}
  ModelInput input_;
};

// The image as a vision view (no copy).
vision::ImageView bgr_view(const cv::Mat& bgr);

}  // namespace taconite::faces
