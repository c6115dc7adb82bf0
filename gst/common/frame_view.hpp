// A mapped GstVideoFrame as the view the GStreamer-free front end (vision/) reads.
#pragma once

#include <gst/video/video.h>

#include <optional>

#include "image_view.hpp"

namespace taconite::gst {

// The layout vision/ reads for a GStreamer format; empty for one it does not read.
std::optional<vision::PixelFormat> pixel_format(GstVideoFormat format);

// The frame's planes, strides and size, and for Y'CbCr the caps' colour matrix (BT.601 when they
// leave it unknown) and range. Empty for a format vision/ does not read (the elements' caps never
// offer one). The view reads the frame's memory: valid while the frame is mapped.
std::optional<vision::ImageView> frame_view(const GstVideoFrame& frame);

}  // namespace taconite::gst
