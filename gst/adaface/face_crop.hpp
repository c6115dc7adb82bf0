// The network input for one face chosen by face_selection, cropped: the whole buffer, or the square around
// its box (unaligned; an aligned face goes through vision/similarity_alignment.hpp instead).
#pragma once

#include <vector>

#include "face_selection.hpp"
#include "image_view.hpp"
#include "pixel_normalisation.hpp"

namespace taconite::gst {

// The face's pixels (black outside the frame) as width x height planes normalised with `norm`:
// the whole frame for a whole-buffer job, else the square around its box enlarged by `margin`.
void face_to_chw(const vision::ImageView& frame, const FaceJob& face, double margin, int width, int height,
                 const vision::PixelNormalisation& norm, std::vector<float>& chw);

}  // namespace taconite::gst
