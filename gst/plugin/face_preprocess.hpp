// Pixels to the bundle's input: RGB, ((x/255)-0.5)/0.5, channel-major, model size (spec bundle.md §8).
#pragma once

#include <gst/video/video.h>

#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "enums.hpp"
#include "face_selection.hpp"

namespace taconite::gst {

// The formats the element accepts, as a caps format list.
#define TACONITE_ADAFACE_VIDEO_FORMATS "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, I420, NV12 }"

// A video frame mapped for reading, unmapped when it goes out of scope.
class ReadableFrame {
 public:
  ReadableFrame() = default;
  ReadableFrame(const ReadableFrame&) = delete;
  ReadableFrame& operator=(const ReadableFrame&) = delete;
  ~ReadableFrame() { unmap(); }

  // Maps `buffer` as `info` (the caps) describes it and checks that every plane lies inside the
  // mapped memory: gst_video_frame_map checks the buffer size only when there is no GstVideoMeta
  // and trusts a meta's offsets and strides. False (nothing mapped) with `problem` saying what is
  // wrong when the buffer does not hold the frame it claims to.
  bool map(const GstVideoInfo& info, GstBuffer* buffer, std::string* problem);
  void unmap();
  const GstVideoFrame& get() const { return frame_; }

 private:
  GstVideoFrame frame_{};
  bool mapped_ = false;
};

// The pixels of `region` (frame coordinates; may reach outside the frame, where it is black) as
// an 8-bit RGB image. Honours the mapped frame's plane strides and offsets.
cv::Mat extract_rgb(const GstVideoFrame& frame, const cv::Rect& region);

// The whole frame as an 8-bit RGB image of `size` (INTER_AREA when shrinking, INTER_LINEAR when
// growing). Only the scaling reads the whole frame: packed pixels are scaled before their channels
// are picked, 4:2:0 planes each scaled before conversion, so every other step is bounded by `size`
// (what a detector with a fixed network input needs).
cv::Mat scaled_frame_rgb(const GstVideoFrame& frame, cv::Size size);

// A frame region in pixels; 64-bit because a ROI box may reach far outside the frame.
struct Region {
  gint64 x = 0, y = 0, width = 0, height = 0;
};

// The square around a ROI box, enlarged by `margin` times the box's longer side on every side.
Region square_with_margin(const PixelBox& box, double margin);

// Resizes an RGB image to width x height (INTER_AREA when shrinking, INTER_LINEAR otherwise) and
// writes the normalised planes in `order` (rgb: R,G,B; bgr: B,G,R) into `chw` (3*h*w floats).
void to_normalised_chw(const cv::Mat& rgb, int width, int height, ChannelOrder order, std::vector<float>& chw);

// The pixels of `region` (black outside the frame) resized to width x height, as normalised
// planes. The work is bounded by the frame and model sizes, never by the region's: a region of up
// to 4 times the frame's (or the model input's) area is padded and resized as it is; a larger one
// only has its part inside the frame resized, straight into the model-sized black square.
void region_to_chw(const GstVideoFrame& frame, const Region& region, int width, int height, ChannelOrder order,
                   std::vector<float>& chw);

// The network input for one face of a mapped frame, cropped from its box (or the whole buffer).
void face_to_chw(const GstVideoFrame& frame, const FaceJob& face, double margin, int width, int height,
                 ChannelOrder order, std::vector<float>& chw);

}  // namespace taconite::gst
