// 5-point (or 2-eye) similarity alignment to the 112x112 template of spec bundle.md §10.
//
// Landmarks come from the ROI's params in one of three encodings (first match wins):
//  1. a "landmarks" structure with `x` and `y` arrays (or lists) of numbers, frame pixels; with
//     `normalized=true` they are fractions of the ROI box instead;
//  2. DL Streamer-style: any structure with `format="landmark_points"` and the points as
//     x0,y0,x1,y1,... fractions of the ROI box, in `data` (array/list of numbers) or `data_buffer`
//     (GVariant byte array of little-endian float32);
//  3. facedetect-style `eyes->x`, `eyes->y`, `eyes->width`, `eyes->height` (the eye-pair box,
//     frame pixels) in any structure: the eye centres are taken at 1/4 and 3/4 of its width.
// Five points are in the template's order (left eye, right eye, nose tip, left and right mouth
// corners, as seen in the image); two points are the eye centres.
#pragma once

#include <gst/video/video.h>

#include <array>
#include <opencv2/core.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "enums.hpp"

namespace taconite::gst {

struct Point2 {
  double x = 0.0, y = 0.0;
};

// The template's five points for a width x height input (bundle.md §10 scaled from 112x112).
std::array<Point2, 5> alignment_template(int width, int height);

// The least-squares similarity (rotation, uniform scale, translation; no reflection) taking
// src[i] to dst[i]: Umeyama's solution, closed form in 2-D. Row-major 2x3 [a -b tx; b a ty].
// Empty when fewer than 2 points or all src points coincide.
std::optional<cv::Matx23d> fit_similarity(std::span<const Point2> src, std::span<const Point2> dst);

// The landmarks of a ROI in frame pixels (2 or 5 points), or empty when its params carry none.
std::vector<Point2> roi_landmarks(const GstVideoRegionOfInterestMeta* roi);

// The similarity taking `landmarks` (2 or 5, frame pixels) to the template for width x height.
std::optional<cv::Matx23d> alignment_transform(std::span<const Point2> landmarks, int width, int height);

// The similarity for a ROI's landmarks (see roi_landmarks) in a frame_width x frame_height frame,
// for a width x height model input; empty when the ROI carries none. Landmarks that cannot be a
// face give nothing and say why in `rejected`: a coordinate that is not finite or lies more than
// a frame size outside the frame, eyes less than 2 pixels apart, or a fit whose model input would
// span less than 4 pixels or more than 4 frame sizes of the frame.
std::optional<cv::Matx23d> roi_alignment(const GstVideoRegionOfInterestMeta* roi, int frame_width, int frame_height,
                                         int width, int height, std::string* rejected);

// Warps the frame with `to_template` (frame -> model input) into a width x height RGB image
// (bilinear, black outside the frame) and writes the normalised planes in `order` into `chw`.
void aligned_face_to_chw(const GstVideoFrame& frame, const cv::Matx23d& to_template, int width, int height,
                         ChannelOrder order, std::vector<float>& chw);

}  // namespace taconite::gst
