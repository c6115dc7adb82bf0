// Pixels to the bundle's input: RGB, ((x/255)-0.5)/0.5, channel-major, model size (spec bundle.md §8).
#pragma once

#include <gst/video/video.h>

#include <opencv2/core.hpp>
#include <vector>

#include "enums.hpp"
#include "face_selection.hpp"

namespace taconite::gst {

// The formats the element accepts, as a caps format list.
#define TACONITE_ADAFACE_VIDEO_FORMATS "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, I420, NV12 }"

// The pixels of `region` (frame coordinates; may reach outside the frame, where it is black) as
// an 8-bit RGB image. Honours the mapped frame's plane strides and offsets.
cv::Mat extract_rgb(const GstVideoFrame& frame, const cv::Rect& region);

// The square around a ROI box, enlarged by `margin` times the box's longer side on every side.
cv::Rect square_with_margin(const PixelBox& box, double margin);

// Resizes an RGB image to width x height (INTER_AREA when shrinking, INTER_LINEAR otherwise) and
// writes the normalised planes in `order` (rgb: R,G,B; bgr: B,G,R) into `chw` (3*h*w floats).
void to_normalised_chw(const cv::Mat& rgb, int width, int height, ChannelOrder order, std::vector<float>& chw);

// The network input for one face of a mapped frame.
void face_to_chw(const GstVideoFrame& frame, const FaceJob& face, double margin, int width, int height,
                 ChannelOrder order, std::vector<float>& chw);

}  // namespace taconite::gst
