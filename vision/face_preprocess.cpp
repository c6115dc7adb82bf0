#include "face_preprocess.hpp"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "rgb_conversion.hpp"

namespace taconite::vision {

Region square_with_margin(const PixelBox& box, double margin) {
  const double side = std::max(box.width, box.height) * (1.0 + 2.0 * margin);
  const double cx = box.x + box.width / 2.0, cy = box.y + box.height / 2.0;
  const std::int64_t s = std::max<std::int64_t>(1, std::llround(side));
  return {std::llround(cx - s / 2.0), std::llround(cy - s / 2.0), s, s};
}

void to_normalised_chw(const cv::Mat& rgb, int width, int height, const PixelNormalisation& norm,
                       std::vector<float>& chw) {
  cv::Mat sized = rgb;
  if (rgb.cols != width || rgb.rows != height) {
    const bool shrinking = rgb.cols >= width && rgb.rows >= height;
    cv::resize(rgb, sized, cv::Size(width, height), 0, 0, shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
  }
  const std::size_t plane = static_cast<std::size_t>(width) * height;
  chw.resize(3 * plane);
  // Output plane c takes source channel source[c]: RGB keeps R,G,B; BGR feeds B,G,R.
  const bool rgb_order = norm.order != ChannelOrder::Bgr;
  const int source[3] = {rgb_order ? 0 : 2, 1, rgb_order ? 2 : 0};
  for (int y = 0; y < height; ++y) {
    const auto* row = sized.ptr<cv::Vec3b>(y);
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        chw[c * plane + static_cast<std::size_t>(y) * width + x] =
            (row[x][source[c]] / 255.0f - norm.mean[c]) / norm.std_dev[c];
  }
}

void region_to_chw(const ImageView& image, const Region& region, int width, int height,
                   const PixelNormalisation& norm, std::vector<float>& chw) {
  const std::int64_t fw = image.width, fh = image.height;
  const std::int64_t padded_limit = 4 * std::max(fw * fh, static_cast<std::int64_t>(width) * height);
  if (region.width <= padded_limit / std::max<std::int64_t>(1, region.height)) {
    // Such a region intersects the image (as every face box does), so it fits an int rectangle.
    const cv::Rect rect(static_cast<int>(region.x), static_cast<int>(region.y), static_cast<int>(region.width),
                        static_cast<int>(region.height));
    to_normalised_chw(extract_rgb(image, rect), width, height, norm, chw);
    return;
  }
  // Far larger than the image: scale just the part inside the image to its place in the square.
  const std::int64_t x0 = std::clamp<std::int64_t>(region.x, 0, fw);
  const std::int64_t x1 = std::clamp<std::int64_t>(region.x + region.width, 0, fw);
  const std::int64_t y0 = std::clamp<std::int64_t>(region.y, 0, fh);
  const std::int64_t y1 = std::clamp<std::int64_t>(region.y + region.height, 0, fh);
  cv::Mat canvas(height, width, CV_8UC3, cv::Scalar::all(0));
  if (x1 > x0 && y1 > y0) {
    const double sx = static_cast<double>(width) / region.width, sy = static_cast<double>(height) / region.height;
    const int left = std::clamp(static_cast<int>(std::lround((x0 - region.x) * sx)), 0, width - 1);
    const int top = std::clamp(static_cast<int>(std::lround((y0 - region.y) * sy)), 0, height - 1);
    const int w = std::clamp(static_cast<int>(std::lround((x1 - x0) * sx)), 1, width - left);
    const int h = std::clamp(static_cast<int>(std::lround((y1 - y0) * sy)), 1, height - top);
    const cv::Mat inside = extract_rgb(image, cv::Rect(static_cast<int>(x0), static_cast<int>(y0),
                                                       static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)));
    cv::Mat place = canvas(cv::Rect(left, top, w, h));
    cv::resize(inside, place, place.size(), 0, 0, cv::INTER_AREA);
  }
  to_normalised_chw(canvas, width, height, norm, chw);
}

}  // namespace taconite::vision
