#include "aligned_face_finder.hpp"

#include <opencv2/imgproc.hpp>

namespace taconite::faces {

Result<std::vector<vision::FaceBox>> AlignedFaceFinder::find(const cv::Mat& bgr) {
  rgb_.release();
  if (bgr.cols != input_.width || bgr.rows != input_.height)
    return Error{ErrorKind::Input, "is " + std::to_string(bgr.cols) + "x" + std::to_string(bgr.rows) +
                                       ", not an aligned face of the model's " + std::to_string(input_.width) + "x" +
                                       std::to_string(input_.height) + " (--aligned)"};
  cv::cvtColor(bgr, rgb_, cv::COLOR_BGR2RGB);
  return std::vector<vision::FaceBox>{{0, 0, bgr.cols, bgr.rows}};
}

Result<cv::Mat> AlignedFaceFinder::aligned_face(std::size_t index) {
  if (index != 0 || rgb_.empty()) return Error{ErrorKind::Input, "no face #" + std::to_string(index)};
  return rgb_;
}

}  // namespace taconite::faces
