// Genuine and impostor score histograms as a PNG (OpenCV drawing), the one plot of
// `taconite-gallery calibrate --plot` and `realfaces-bench --plot`: one panel per set of scores,
// stacked on one x axis that spans every score and threshold in whole tenths within the cosine's
// [-1, 1]. In each panel both histograms, each scaled to its own tallest bin (impostors usually
// outnumber genuine scores many times), and the panel's threshold as a vertical line. Each panel
// is kPlotWidth x kPanelHeight, whatever the number of scores; scores that are NaN or infinite are
// counted in the legend but drawn nowhere.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "gallery_store.hpp"

namespace taconite::plot {

inline constexpr int kPlotWidth = 800, kPanelHeight = 480;
inline constexpr std::size_t kMaxPanels = 16;  // bounds the image's height

struct ScorePanel {
  std::string title;  // before the legend, e.g. "foamliu-128, YuNet-aligned"; may be empty
  std::span<const double> genuine, impostor;  // must stay alive until write_score_plot returns
  double threshold = 0.0;
};

struct ScorePlot {
  std::string x_axis;   // what a score is, under the axis: "cosine similarity of the best identity"
  std::string counted;  // what the bars count, beside the vertical axis: "probes", "pairs"
  std::vector<ScorePanel> panels;  // 1..kMaxPanels
};

// Writes the plot to `path`, which must end in .png, lie in an existing directory and be absent or
// a regular file (a FIFO or device is refused, never opened); written to a temporary name in the
// same directory (`path`.part) and renamed, so a reader never sees half a file. Errors start with
// the path.
gallery::Status write_score_plot(const std::string& path, const ScorePlot& plot);

}  // namespace taconite::plot
