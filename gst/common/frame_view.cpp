#include "frame_view.hpp"

namespace taconite::gst {

std::optional<vision::PixelFormat> pixel_format(GstVideoFormat format) {
  using vision::PixelFormat;
  switch (format) {
    case GST_VIDEO_FORMAT_RGB: return PixelFormat::Rgb;
    case GST_VIDEO_FORMAT_BGR: return PixelFormat::Bgr;
    case GST_VIDEO_FORMAT_RGBx: return PixelFormat::Rgbx;
    case GST_VIDEO_FORMAT_BGRx: return PixelFormat::Bgrx;
    case GST_VIDEO_FORMAT_xRGB: return PixelFormat::Xrgb;
    case GST_VIDEO_FORMAT_xBGR: return PixelFormat::Xbgr;
    case GST_VIDEO_FORMAT_RGBA: return PixelFormat::Rgba;
    case GST_VIDEO_FORMAT_BGRA: return PixelFormat::Bgra;
    case GST_VIDEO_FORMAT_I420: return PixelFormat::I420;
    case GST_VIDEO_FORMAT_NV12: return PixelFormat::Nv12;
    case GST_VIDEO_FORMAT_GRAY8: return PixelFormat::Gray8;
    default: return std::nullopt;
  }
}

std::optional<vision::ImageView> frame_view(const GstVideoFrame& frame) {
  const std::optional<vision::PixelFormat> format = pixel_format(GST_VIDEO_FRAME_FORMAT(&frame));
  if (!format) return std::nullopt;
  vision::ImageView view;
  view.format = *format;
  view.width = GST_VIDEO_FRAME_WIDTH(&frame);
  view.height = GST_VIDEO_FRAME_HEIGHT(&frame);
  for (guint plane = 0; plane < GST_VIDEO_FRAME_N_PLANES(&frame) && plane < view.planes.size(); ++plane) {
    view.planes[plane] = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, plane));
    view.strides[plane] = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, plane);
  }
  const GstVideoColorimetry& colorimetry = GST_VIDEO_INFO_COLORIMETRY(&frame.info);
  gdouble kr = 0.299, kb = 0.114;
  if (!gst_video_color_matrix_get_Kr_Kb(colorimetry.matrix, &kr, &kb)) kr = 0.299, kb = 0.114;
  view.colour = {kr, kb, colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255};
  return view;
}

}  // namespace taconite::gst
