#include "hog_face_finder.hpp"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "similarity_alignment.hpp"

namespace taconite::faces {

HogFaceFinder::HogFaceFinder(std::shared_ptr<const vision::LandmarkModel> landmarks, const ModelInput& input)
    : FaceFinder(input), landmarks_(std::move(landmarks)) {}
HogFaceFinder::~HogFaceFinder() = default;

Result<std::vector<vision::FaceBox>> HogFaceFinder::find(const cv::Mat& bgr) {
  const double scale = std::max(bgr.cols, bgr.rows) <= kUpscaleBelow ? 2.0 : 1.0;
  if (scale != 1.0)
    cv::resize(bgr, searched_, cv::Size(), scale, scale, cv::INTER_LINEAR);
  else
    searched_ = bgr;
  std::vector<vision::FaceDetection> detected = detector_.detect(bgr_view(searched_), 1.0);
  std::stable_sort(detected.begin(), detected.end(), [](const vision::FaceDetection& a, const vision::FaceDetection& b) {
    return a.box.width * a.box.height > b.box.width * b.box.height;
  });
  found_.clear();
  std::vector<vision::FaceBox> faces;
  for (const vision::FaceDetection& f : detected) {
    found_.push_back(f.box);
    faces.push_back({std::llround(f.box.x / scale), std::llround(f.box.y / scale), std::llround(f.box.width / scale),
                     std::llround(f.box.height / scale)});
  }
  return faces;
}

Result<cv::Mat> HogFaceFinder::aligned_face(std::size_t index) {
  if (index >= found_.size()) return Error{ErrorKind::Input, "no face #" + std::to_string(index)};
  const vision::ImageView view = bgr_view(searched_);
  const std::array<vision::Point2, 5> five = landmarks_->predict(view, found_[index]).five();
  const std::optional<cv::Matx23d> to_template = vision::alignment_transform(five, input_.width, input_.height);
  if (!to_template) return Error{ErrorKind::Input, "the face's landmarks give no alignment"};
  return vision::aligned_face_rgb(view, *to_template, input_.width, input_.height);
}

Result<std::unique_ptr<FaceFinder>> load_hog_face_finder(const std::string& landmarks_model, const ModelInput& input) {
  Result<std::shared_ptr<const vision::LandmarkModel>> landmarks = vision::LandmarkModel::load(landmarks_model);
  if (!landmarks) return landmarks.error();
  return std::unique_ptr<FaceFinder>(std::make_unique<HogFaceFinder>(std::move(landmarks.value()), input));
}

}  // namespace taconite::faces
