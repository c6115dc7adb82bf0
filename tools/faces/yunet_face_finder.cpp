#include "yunet_face_finder.hpp"

#include <algorithm>
#include <cmath>

#include "rgb_conversion.hpp"
#include "similarity_alignment.hpp"

namespace taconite::faces {

YuNetFaceFinder::YuNetFaceFinder(std::unique_ptr<vision::YuNetDetector> detector, const ModelInput& input)
    : FaceFinder(input), detector_(std::move(detector)) {}

Result<std::unique_ptr<YuNetFaceFinder>> YuNetFaceFinder::load(const std::string& model_path,
                                                               const ModelInput& input, int threads) {
  vision::YuNetOptions options;
  options.threads = threads;
  auto loaded = vision::YuNetDetector::load(model_path, options);
  if (!loaded) return loaded.error();
  return std::unique_ptr<YuNetFaceFinder>(new YuNetFaceFinder(std::move(loaded.value()), input));
}

Result<std::vector<vision::FaceBox>> YuNetFaceFinder::find(const cv::Mat& bgr) {
  image_ = bgr;
  found_.clear();
  std::vector<std::pair<vision::DetectedFace, vision::FaceBox>> faces;
  const cv::Rect2f frame(0, 0, static_cast<float>(bgr.cols), static_cast<float>(bgr.rows));
  // Scaled to the network input as taconitedetect scales a frame, so the points are the element's.
  const cv::Mat fitted = vision::scaled_frame_rgb(bgr_view(bgr), detector_->fitted_size(bgr.size()));
  for (const vision::DetectedFace& f : detector_->detect_fitted(fitted, bgr.size(), /*rgb_order=*/true)) {
    // Clipped to the image as taconitedetect clips its ROIs; a box wholly outside is no face.
    const cv::Rect2f inside = f.box & frame;
    const vision::FaceBox box{std::llround(inside.x), std::llround(inside.y), std::llround(inside.width),
                              std::llround(inside.height)};
    if (box.width > 0 && box.height > 0) faces.emplace_back(f, box);
  }
  std::stable_sort(faces.begin(), faces.end(), [](const auto& a, const auto& b) {
    return a.second.width * a.second.height > b.second.width * b.second.height;
  });
  std::vector<vision::FaceBox> boxes;
  for (const auto& [face, box] : faces) {
    found_.push_back(face);
    boxes.push_back(box);
  }
  return boxes;
}

Result<cv::Mat> YuNetFaceFinder::aligned_face(std::size_t index) {
  if (index >= found_.size()) return Error{ErrorKind::Input, "no face #" + std::to_string(index)};
  std::array<vision::Point2, 5> five;
  for (std::size_t i = 0; i < five.size(); ++i) five[i] = {found_[index].landmarks[i].x, found_[index].landmarks[i].y};
  const Result<cv::Matx23d> to_template =
      vision::checked_alignment(five, image_.cols, image_.rows, input_.width, input_.height);
  if (!to_template)
    return Error{ErrorKind::Input, "the face's landmarks give no alignment (" + to_template.error().message + ")"};
  return vision::aligned_face_rgb(bgr_view(image_), to_template.value(), input_.width, input_.height);
}

}  // namespace taconite::faces
