// Pixels to the model's input: channel-major planes at the model's size, normalised as the model
// says (pixel_normalisation.hpp; for a bundle RGB, ((x/255)-0.5)/0.5, spec bundle.md §8).
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <vector>

#include "image_view.hpp"
#include "pixel_normalisation.hpp"

namespace taconite::vision {

// A face box in image pixels (may reach outside the image).
struct PixelBox {
  int x = 0, y = 0, width = 0, height = 0;
};

// An image region in pixels; 64-bit because a ROI box may reach far outside the image.
struct Region {
  std::int64_t x = 0, y = 0, width = 0, height = 0;
};

// The square around a face box, enlarged by `margin` times the box's longer side on every side.
Region square_with_margin(const PixelBox& box, double margin);

// Resizes an RGB image to width x height (INTER_AREA when shrinking, INTER_LINEAR otherwise) and
// writes the planes in `norm.order` (rgb: R,G,B; bgr: B,G,R), plane c as (x/255 - mean[c]) /
// std_dev[c], into `chw` (3*h*w floats).
void to_normalised_chw(const cv::Mat& rgb, int width, int height, const PixelNormalisation& norm,
                       std::vector<float>& chw);

// The pixels of `region` (black outside the image) resized to width x height, as normalised
// planes. The work is bounded by the image and model sizes, never by the region's: a region of up
// to 4 times the image's (or the model input's) area is padded and resized as it is; a larger one
// only has its part inside the image resized, straight into the model-sized black square.
void region_to_chw(const ImageView& image, const Region& region, int width, int height,
                   const PixelNormalisation& norm, std::vector<float>& chw);

}  // namespace taconite::vision
