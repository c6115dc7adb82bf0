#include "readable_frame.hpp"

#include <cstdarg>
#include <optional>

#include "frame_view.hpp"

namespace taconite::gst {

namespace {

std::string format_text(const char* format, ...) G_GNUC_PRINTF(1, 2);
std::string format_text(const char* format, ...) {
  va_list args;
  va_start(args, format);
  gchar* text = g_strdup_vprintf(format, args);
  va_end(args);
  std::string out = text;
  g_free(text);
  return out;
}

// Why `plane` of a mapped frame does not fit its memory, or "" when it does. `map` holds the plane.
std::string plane_problem(const GstVideoFrame& frame, guint plane, const GstMapInfo& map) {
  gint components[GST_VIDEO_MAX_COMPONENTS];
  gst_video_format_info_component(frame.info.finfo, plane, components);
  const int comp = components[0];
  const guint64 rows = static_cast<guint>(GST_VIDEO_FRAME_COMP_HEIGHT(&frame, comp));
  const guint64 row_bytes = static_cast<guint64>(static_cast<guint>(GST_VIDEO_FRAME_COMP_WIDTH(&frame, comp))) *
                            static_cast<guint>(GST_VIDEO_FRAME_COMP_PSTRIDE(&frame, comp));
  const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, plane);
  if (stride < 0 || static_cast<guint64>(stride) < row_bytes)
    return format_text("plane %u has stride %d, below its row of %" G_GUINT64_FORMAT " bytes", plane, stride,
                       row_bytes);
  const auto* data = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, plane));
  if (data < map.data || data > map.data + map.size)
    return format_text("plane %u starts outside its memory of %" G_GSIZE_FORMAT " bytes", plane, map.size);
  const guint64 start = static_cast<guint64>(data - map.data);
  // rows and stride are below 2^31, so this cannot overflow.
  const guint64 needed = rows == 0 ? 0 : (rows - 1) * static_cast<guint64>(stride) + row_bytes;
  if (needed > map.size - start)
    return format_text("plane %u needs %" G_GUINT64_FORMAT " bytes at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
                       " rows, stride %d), past the end of its %" G_GSIZE_FORMAT "-byte memory",
                       plane, needed, start, rows, stride, map.size);
  return {};
}

// The buffer does not hold the frame it claims to: the caller's input.
Error not_the_frame(std::string problem) { return Error{ErrorKind::Input, std::move(problem)}; }

}  // namespace

Status ReadableFrame::map(const GstVideoInfo& info, GstBuffer* buffer, GstMapFlags flags) {
  unmap();
  const GstVideoMeta* meta = gst_buffer_get_video_meta(buffer);
  // gst_video_frame_map only g_return_val_if_fail()s on a meta that contradicts the caps.
  if (meta && (meta->format != GST_VIDEO_INFO_FORMAT(&info) ||
               meta->width < static_cast<guint>(GST_VIDEO_INFO_WIDTH(&info)) ||
               meta->height < static_cast<guint>(GST_VIDEO_INFO_HEIGHT(&info)) ||
               meta->n_planes != GST_VIDEO_INFO_N_PLANES(&info))) {
    return not_the_frame(format_text("its GstVideoMeta (%s %ux%u, %u planes) does not match the caps (%u planes)",
                                     gst_video_format_to_string(meta->format), meta->width, meta->height,
                                     meta->n_planes, GST_VIDEO_INFO_N_PLANES(&info)));
  }
  if (!gst_video_frame_map(&frame_, const_cast<GstVideoInfo*>(&info), buffer, flags)) {
    return not_the_frame(meta ? format_text("a plane offset of its GstVideoMeta lies outside the buffer of %" G_GSIZE_FORMAT
                                            " bytes",
                                            gst_buffer_get_size(buffer))
                              : format_text("it holds %" G_GSIZE_FORMAT " bytes, the caps describe %" G_GSIZE_FORMAT,
                                            gst_buffer_get_size(buffer), GST_VIDEO_INFO_SIZE(&info)));
  }
  mapped_ = true;
  // With a meta each plane has its own mapping; without one, map[0] holds the whole buffer.
  for (guint plane = 0; plane < GST_VIDEO_FRAME_N_PLANES(&frame_); ++plane) {
    std::string problem = plane_problem(frame_, plane, frame_.map[meta ? plane : 0]);
    if (!problem.empty()) {
      unmap();
      return not_the_frame(std::move(problem));
    }
  }
  const std::optional<vision::ImageView> view = frame_view(frame_);
  if (!view) {
    unmap();
    return not_the_frame(format_text("its format %s is not one the face front end reads",
                                     gst_video_format_to_string(GST_VIDEO_FRAME_FORMAT(&frame_))));
  }
  view_ = *view;
  return Ok{};
}

void ReadableFrame::unmap() {
  if (mapped_) gst_video_frame_unmap(&frame_);
  mapped_ = false;
  view_ = {};
}

}  // namespace taconite::gst
