// What taconitetrack reads from a detector's ROI (its `detection` param's confidence and whether
// the box is fresh) and writes back on frames without a detection (the track's predicted box, the
// landmarks moved with it, `predicted` TRUE).
#pragma once

#include <gst/video/video.h>

#include "box_tracker.hpp"

namespace taconite::gst {

// The ROI as a tracker detection with `box` (its box clipped to the frame): the `detection` param's
// `confidence` (1 without the param, as for facedetect; 0 when not a finite number) and `fresh` (TRUE
// when absent).
vision::Detection roi_detection(const GstVideoRegionOfInterestMeta* roi, const vision::Box& box);

// Moves a stale ROI whose box the tracker saw as `measured` to the track's `predicted` box: the ROI
// becomes `predicted` clipped to the frame, its landmarks (if any) follow by the scale and
// translation taking `measured` to `predicted` (written as a `landmarks` param in frame pixels), and
// its `detection` param gets `predicted` TRUE. Returns false, changing nothing, when less than one
// pixel of the prediction lies inside the frame or it is not finite.
bool move_roi_to_prediction(GstVideoRegionOfInterestMeta* roi, const vision::Box& measured, const vision::Box& predicted,
                            const GstVideoInfo& info);

}  // namespace taconite::gst
