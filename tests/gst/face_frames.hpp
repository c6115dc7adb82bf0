// Real-photo frames and ROI readers shared by the face element tests (taconitedetect,
// taconitelandmarks): python3-skimage's astronaut as a packed RGB buffer, ROI metas and their
// landmark params.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>
#include <vector>

namespace gsttest {

struct Pt {
  double x = 0, y = 0;
};

// The astronaut photo (512x512, scaled by `zoom`) as a packed RGB buffer; nullptr when
// TACONITE_TEST_ASTRONAUT (python3-skimage's astronaut.png) is not readable.
GstBuffer* astronaut_rgb(int* width, int* height, double zoom = 1.0);

// Caps of a 30 fps raw video stream.
std::string video_caps(const char* format, int width, int height);

// The buffer's ROI metas in meta order.
std::vector<GstVideoRegionOfInterestMeta*> rois_of(GstBuffer* buffer);

// The points of a ROI param structure with `x`/`y` double arrays; empty when the ROI has none.
std::vector<Pt> roi_points(GstVideoRegionOfInterestMeta* roi, const char* name);

}  // namespace gsttest
