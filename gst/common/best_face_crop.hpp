// The pictures of a buffer's improved faces (best_faces.hpp): the frame is mapped read-only once,
// and only when a face is to be cropped, and each face is aligned to the 112x112 template with its
// ROI's landmarks (vision/ does the warp). Serves taconitepublish's best faces and
// taconiteidentify's unknown faces alike.
#pragma once

#include <gst/video/video.h>

#include <functional>
#include <opencv2/core.hpp>
#include <span>

#include "best_faces.hpp"
#include "taconite/error.hpp"

namespace taconite::gst {

// The side of a best face's picture: the aligned crop taconiteadaface embeds.
inline constexpr int kBestFaceSize = 112;

// Asked for each improved face in order, before any work for it: false skips it (e.g. a writer
// queue that would refuse it), and a buffer whose faces are all skipped is never mapped.
using WantCrop = std::function<bool(const ImprovedFace&)>;
// Gets each crop: kBestFaceSize x kBestFaceSize RGB, 8 bits per channel, owning its pixels.
using TakeCrop = std::function<void(const ImprovedFace&, cv::Mat rgb)>;

// Crops the faces of `faces` that `want` accepts from `buffer` as `info` (its caps) describes it.
// A face whose ROI has no usable landmarks is skipped (no picture). An Input error saying why when
// the frame cannot be read (`info` null, a buffer smaller than its caps, a format the face front
// end does not read): no face of the buffer is cropped then. Nothing is mapped, and Ok returned,
// when no face is wanted.
Status crop_improved_faces(GstBuffer* buffer, const GstVideoInfo* info, std::span<const ImprovedFace> faces,
                           const WantCrop& want, const TakeCrop& take);

}  // namespace taconite::gst
