// A video buffer mapped for reading (or, for an element that draws, also for writing), its planes
// checked against its memory, and seen as the view vision/ reads.
#pragma once

#include <gst/video/video.h>

#include <string>

#include "image_view.hpp"
#include "taconite/error.hpp"

namespace taconite::gst {

// A video frame mapped for reading, unmapped when it goes out of scope.
class ReadableFrame {
 public:
  ReadableFrame() = default;
  ReadableFrame(const ReadableFrame&) = delete;
  ReadableFrame& operator=(const ReadableFrame&) = delete;
  ~ReadableFrame() { unmap(); }

  // Maps `buffer` as `info` (the caps) describes it and checks that every plane lies inside the
  // mapped memory: gst_video_frame_map checks the buffer size only when there is no GstVideoMeta
  // and trusts a meta's offsets and strides. An Input error (nothing mapped) saying what is wrong
  // when the buffer does not hold the frame it claims to. `flags` adds GST_MAP_WRITE for an
  // element that draws on the frame (the buffer must be writable; shared memory is copied first).
  Status map(const GstVideoInfo& info, GstBuffer* buffer, GstMapFlags flags = GST_MAP_READ);
  void unmap();
  const GstVideoFrame& get() const { return frame_; }
  // The mapped frame as vision/ reads it (frame_view.hpp); valid while mapped.
  const vision::ImageView& view() const { return view_; }

 private:
  GstVideoFrame frame_{};
  vision::ImageView view_;
  bool mapped_ = false;
};

}  // namespace taconite::gst
