#include "face_finder.hpp"

namespace taconite::gallery_cli {

vision::ImageView bgr_view(const cv::Mat& bgr) {
  vision::ImageView view;
  view.format = vision::PixelFormat::Bgr;
  view.width = bgr.cols;
  view.height = bgr.rows;
  view.planes[0] = bgr.data;
  view.strides[0] = static_cast<int>(bgr.step[0]);
  return view;
}

}  // namespace taconite::gallery_cli
