// A ROI's face alignment: its landmarks read from its params, checked, and fitted to the model's
// template (the geometry is vision/similarity_alignment.hpp; this file only reads GStreamer metas).
//
// The points are the metadata library's (gst_taconite_roi_get_landmarks, gst/taconite/gsttaconiteroi.h,
// which lists the encodings: taconite's "landmarks", DL Streamer's landmark_points, facedetect's
// eyes), so an application reading them sees the face the elements aligned. Five points are in the
// template's order (see similarity_alignment.hpp); two points are the eye centres.
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

// The landmarks of a ROI in frame pixels (2 or 5 points), or empty when its params carry none (or
// another number of points, which no alignment uses).
std::vector<Point2> roi_landmarks(const GstVideoRegionOfInterestMeta* roi);

// The similarity for a ROI's landmarks (see roi_landmarks) in a frame_width x frame_height frame,
// for a width x height model input; empty when the ROI carries none. Landmarks that cannot be a
// face give nothing and say why in `rejected` (vision::checked_alignment's checks).
std::optional<cv::Matx23d> roi_alignment(const GstVideoRegionOfInterestMeta* roi, int frame_width, int frame_height,
                                         int width, int height, std::string* rejected);

}  // namespace taconite::gst
