// 5-point (or 2-eye) similarity alignment to the 112x112 template of spec bundle.md §10, and the
// warp of an image into the aligned model input. Five points are in the template's order (left
// eye, right eye, nose tip, left and right mouth corners, as seen in the image); two points are
// the eye centres.
#pragma once

#include <array>
#include <opencv2/core.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "image_view.hpp"
#include "pixel_normalisation.hpp"
#include "taconite/error.hpp"

namespace taconite::vision {

struct Point2 {
  double x = 0.0, y = 0.0;
};

// The template's five points for a width x height input (bundle.md §10 scaled from 112x112).
std::array<Point2, 5> alignment_template(int width, int height);

// The least-squares similarity (rotation, uniform scale, translation; no reflection) taking
// src[i] to dst[i]: Umeyama's solution, closed form in 2-D. Row-major 2x3 [a -b tx; b a ty].
// Empty when fewer than 2 points or all src points coincide.
std::optional<cv::Matx23d> fit_similarity(std::span<const Point2> src, std::span<const Point2> dst);

// The similarity taking `landmarks` (2 or 5, image pixels) to the template for width x height.
std::optional<cv::Matx23d> alignment_transform(std::span<const Point2> landmarks, int width, int height);

// alignment_transform for landmarks found in a frame_width x frame_height image, refusing those
// that cannot be a face (an Input error saying why): a coordinate that is not finite or lies more
// than a frame size outside the frame, eyes less than 2 pixels apart, or a fit whose model input
// would span less than 4 pixels or more than 4 frame sizes of the frame. The elements (ROI
// landmarks) and the gallery CLI (YuNet's points on a photo) align through this one check.
Result<cv::Matx23d> checked_alignment(std::span<const Point2> landmarks, int frame_width, int frame_height, int width,
                                      int height);

// Warps the image with `to_template` (image -> model input) into a width x height RGB image
// (8-bit, 3 channels; bilinear, black outside the image): the aligned face as a person sees it.
cv::Mat aligned_face_rgb(const ImageView& image, const cv::Matx23d& to_template, int width, int height);

// aligned_face_rgb's image as the model's normalised planes (the model input), written into `chw`.
void aligned_face_to_chw(const ImageView& image, const cv::Matx23d& to_template, int width, int height,
                         const PixelNormalisation& norm, std::vector<float>& chw);

}  // namespace taconite::vision
