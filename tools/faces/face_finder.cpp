#include "face_finder.hpp"

#include "face_preprocess.hpp"

namespace taconite::faces {

gallery::Status FaceFinder::model_input(std::size_t index, std::vector<float>& chw) {
  Result<cv::Mat> face = aligned_face(index);
  if (!face) return face.error();
  vision::to_normalised_chw(face.value(), input_.width, input_.height, input_.norm, chw);
  return gallery::Ok{};
}

vision::ImageView bgr_view(const cv::Mat& bgr) {
  vision::ImageView view;
  view.format = vision::PixelFormat::Bgr;
  view.width = bgr.cols;
  view.height = bgr.rows;
  view.planes[0] = bgr.data;
  view.strides[0] = static_cast<int>(bgr.step[0]);
  return view;
}

}  // namespace taconite::faces
