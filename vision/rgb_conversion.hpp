// Any image the front end reads (image_view.hpp) to 8-bit RGB: the whole image scaled, or a region.
#pragma once

#include <opencv2/core.hpp>

#include "image_view.hpp"

namespace taconite::vision {

// The pixels of `region` (image coordinates; may reach outside the image, where it is black) as
// an 8-bit RGB image. Honours the view's plane strides; Y'CbCr converts as its colour says, each
// pixel taking the chroma of its 2x2 block.
cv::Mat extract_rgb(const ImageView& image, const cv::Rect& region);

// The whole image as an 8-bit RGB image of `size` (INTER_AREA when shrinking, INTER_LINEAR when
// growing). Only the scaling reads the whole image: packed pixels are scaled before their channels
// are picked, 4:2:0 planes each scaled before conversion, so every other step is bounded by `size`
// (what a detector with a fixed network input needs).
cv::Mat scaled_frame_rgb(const ImageView& image, cv::Size size);

}  // namespace taconite::vision
