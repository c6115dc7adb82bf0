// Hard scene cuts (shot boundaries) in a video, from the frames' luma alone (no GStreamer).
//
// Each frame is reduced to a thumbnail of at most kMaxColumns x kMaxRows cells, each the mean luma
// of at most 4x4 evenly spread pixels of its part of the frame (so a frame of any size costs at
// most 36 864 reads). Two frames are compared by two distances, each 0..1:
//  - appearance: half the L1 distance of the cells' 16-bin luma histograms, one per quadrant of
//    the frame, averaged (how much of each part of the picture changed brightness class; a pan, a
//    zoom or someone walking through keeps most of it, and quadrants tell apart two shots whose
//    whole-frame histograms happen to agree);
//  - structure: 1 - the correlation of the thumbnails (negative correlation counts as 1), which
//    does not change when the light changes gain or offset. A flat thumbnail (all one grey) has
//    no structure: two flat frames have distance 0, a flat and a structured one 1.
// The cut score is the smaller of the two: a cut changes both, while a light switched on changes
// the histogram but not the structure, and motion changes the structure more than the histogram.
// Not thread-safe: one detector per stream, fed in frame order.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "image_view.hpp"

namespace taconite::vision {

// What one frame gave: whether it starts a new shot, and the score compared with the threshold.
struct SceneCutResult {
  bool cut = false;
  double score = 0.0;      // 0 (the same picture) .. 1; 0 for the first frame
  double appearance = 0.0; // the two distances the score is the smaller of
  double structure = 0.0;
  std::string problem;     // non-empty: the view was refused (nothing read, the last frame kept)
};

class SceneCutDetector {
 public:
  static constexpr int kMaxColumns = 64;
  static constexpr int kMaxRows = 36;
  static constexpr int kMaxSide = 1 << 16;  // frames wider or higher than this are refused
  static constexpr int kBins = 16;
  static constexpr int kRegions = 2;  // histograms per side: kRegions x kRegions of them

  // Compares `frame` with the previous frame given; a cut when the score exceeds `threshold`
  // (threshold <= 0: never). A frame of another size than the previous starts afresh (no cut).
  SceneCutResult update(const ImageView& frame, double threshold);
  // Forgets the previous frame (the next one is a first frame).
  void reset() { have_previous_ = false; }

 private:
  struct Signature {
    int columns = 0, rows = 0, width = 0, height = 0;
    std::vector<double> cells;  // row-major mean luma, 0..255
    // per region (row-major), the fraction of its cells per luma bin
    std::array<std::array<double, kBins>, kRegions * kRegions> histograms{};
  };

  Signature previous_;
  Signature current_;
  bool have_previous_ = false;
};

// Why `frame` cannot be read as luma (empty when it can): a size below 1 or above kMaxSide, no
// plane 0, or a plane 0 stride below its row of pixels. The view's memory itself is its maker's
// to check (gst/common/readable_frame.hpp checks a mapped buffer's planes).
std::string scene_cut_view_problem(const ImageView& frame);

}  // namespace taconite::vision
