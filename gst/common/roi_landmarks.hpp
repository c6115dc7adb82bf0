// A ROI's face alignment: its landmarks read from its params, checked, and fitted to the model's
// template (the geometry is vision/similarity_alignment.hpp; this file only reads GStreamer metas).
//
// Landmarks come from the ROI's params in one of three encodings (first match wins):
//  1. a "landmarks" structure with `x` and `y` arrays (or lists) of numbers, frame pixels; with
//     `normalized=true` they are fractions of the ROI box instead;
//  2. DL Streamer-style: any structure with `format="landmark_points"` and the points as
//     x0,y0,x1,y1,... fractions of the ROI box, in `data` (array/list of numbers) or `data_buffer`
//     (GVariant byte array of little-endian float32);
//  3. facedetect-style `eyes->x`, `eyes->y`, `eyes->width`, `eyes->height` (the eye-pair box,
//     frame pixels) in any structure: the eye centres are taken at 1/4 and 3/4 of its width.
// Five points are in the template's order (see similarity_alignment.hpp); two points are the eye centres.
#pragma once

#include <gst/video/video.h>

#include <opencv2/core.hpp>
#include <optional>
#include <string>
#include <vector>

#include "similarity_alignment.hpp"

namespace taconite::gst {

// The elements' landmark point is vision's.
using vision::Point2;

// The landmarks of a ROI in frame pixels (2 or 5 points), or empty when its params carry none.
std::vector<Point2> roi_landmarks(const GstVideoRegionOfInterestMeta* roi);

// The similarity for a ROI's landmarks (see roi_landmarks) in a frame_width x frame_height frame,
// for a width x height model input; empty when the ROI carries none. Landmarks that cannot be a
// face give nothing and say why in `rejected` (vision::checked_alignment's checks).
std::optional<cv::Matx23d> roi_alignment(const GstVideoRegionOfInterestMeta* roi, int frame_width, int frame_height,
                                         int width, int height, std::string* rejected);

}  // namespace taconite::gst
