// calibrate --plot: the genuine and impostor score distributions as a PNG (OpenCV drawing): two
// histograms, each scaled to its own tallest bin, the chosen threshold as a vertical line, labelled
// axes. The image is always kPlotWidth x kPlotHeight, whatever the number of scores.
#pragma once

#include <span>
#include <string>

#include "gallery_store.hpp"

namespace taconite::gallery_cli {

inline constexpr int kPlotWidth = 800, kPlotHeight = 480;

// Writes the plot to `path`, which must end in .png, lie in an existing directory and be absent or
// a regular file (a FIFO or device is refused, never opened); written to a temporary name in the
// same directory and renamed, so a reader never sees half a file. Errors name the path.
gallery::Status write_score_plot(const std::string& path, std::span<const float> genuine,
                                 std::span<const float> impostors, double threshold);

}  // namespace taconite::gallery_cli
