#include "scene_cut.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace taconite::vision {

namespace {

// Pixels read per cell side at most: enough to average out sensor noise, few enough to stay cheap.
constexpr int kSamplesPerSide = 4;
// A thumbnail whose cells deviate less than this (luma levels) from their mean is flat.
constexpr double kFlatDeviation = 2.0;

// The luma (0..255) of pixel (x, y) of plane 0; BT.601 weights for the packed RGB family.
double luma_at(const ImageView& frame, int x, int y) {
  const std::uint8_t* row = frame.planes[0] + static_cast<std::ptrdiff_t>(y) * frame.strides[0];
  if (has_luma_plane(frame.format)) return row[x];
  const std::uint8_t* pixel = row + static_cast<std::ptrdiff_t>(x) * plane0_bytes(frame.format);
  const std::array<int, 3> rgb = rgb_offsets(frame.format);
  return 0.299 * pixel[rgb[0]] + 0.587 * pixel[rgb[1]] + 0.114 * pixel[rgb[2]];
}

// Sample positions of cell `index` of `cells` over `extent` pixels: evenly spread inside it.
std::array<int, kSamplesPerSide> cell_samples(int index, int cells, int extent, int* count) {
  const std::int64_t begin = static_cast<std::int64_t>(index) * extent / cells;
  const std::int64_t end = static_cast<std::int64_t>(index + 1) * extent / cells;  // > begin: cells <= extent
  const int n = static_cast<int>(std::min<std::int64_t>(kSamplesPerSide, end - begin));
  std::array<int, kSamplesPerSide> at{};
  for (int k = 0; k < n; ++k) at[k] = static_cast<int>(begin + (2 * k + 1) * (end - begin) / (2 * n));
  *count = n;
  return at;
}

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double deviation(const std::vector<double>& values, double centre) {
  double sum = 0.0;
  for (double v : values) sum += (v - centre) * (v - centre);
  return std::sqrt(sum / static_cast<double>(values.size()));
}

}  // namespace

std::string scene_cut_view_problem(const ImageView& frame) {
  if (frame.width < 1 || frame.height < 1 || frame.width > SceneCutDetector::kMaxSide ||
      frame.height > SceneCutDetector::kMaxSide)
    return "frame size " + std::to_string(frame.width) + "x" + std::to_string(frame.height) + " is outside 1.." +
           std::to_string(SceneCutDetector::kMaxSide);
  if (!frame.planes[0]) return "the frame has no plane 0";
  const std::int64_t row_bytes = static_cast<std::int64_t>(frame.width) * plane0_bytes(frame.format);
  if (frame.strides[0] < row_bytes)
    return "plane 0 stride " + std::to_string(frame.strides[0]) + " is below its row of " +
           std::to_string(row_bytes) + " bytes";
  return {};
}

SceneCutResult SceneCutDetector::update(const ImageView& frame, double threshold) {
  SceneCutResult result;
  result.problem = scene_cut_view_problem(frame);
  if (!result.problem.empty()) return result;

  Signature& now = current_;
  now.width = frame.width;
  now.height = frame.height;
  now.columns = std::min(kMaxColumns, frame.width);
  now.rows = std::min(kMaxRows, frame.height);
  now.cells.assign(static_cast<std::size_t>(now.columns) * now.rows, 0.0);
  for (auto& histogram : now.histograms) histogram.fill(0.0);
  std::array<double, kRegions * kRegions> region_cells{};
  for (int r = 0; r < now.rows; ++r) {
    int ny = 0;
    const auto ys = cell_samples(r, now.rows, frame.height, &ny);
    for (int c = 0; c < now.columns; ++c) {
      int nx = 0;
      const auto xs = cell_samples(c, now.columns, frame.width, &nx);
      double sum = 0.0;
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) sum += luma_at(frame, xs[i], ys[j]);
      const double cell = sum / (nx * ny);
      now.cells[static_cast<std::size_t>(r) * now.columns + c] = cell;
      const int region = (r * kRegions / now.rows) * kRegions + c * kRegions / now.columns;
      now.histograms[region][std::min(kBins - 1, static_cast<int>(cell) * kBins / 256)] += 1.0;
      region_cells[region] += 1.0;
    }
  }
  for (int region = 0; region < kRegions * kRegions; ++region)
    for (double& bin : now.histograms[region]) bin /= std::max(1.0, region_cells[region]);

  const Signature& before = previous_;
  if (have_previous_ && before.width == now.width && before.height == now.height) {
    double l1 = 0.0;
    for (int region = 0; region < kRegions * kRegions; ++region)
      for (int b = 0; b < kBins; ++b) l1 += std::abs(now.histograms[region][b] - before.histograms[region][b]);
    result.appearance = std::min(1.0, 0.5 * l1 / (kRegions * kRegions));

    const double mean_now = mean(now.cells), mean_before = mean(before.cells);
    const double dev_now = deviation(now.cells, mean_now), dev_before = deviation(before.cells, mean_before);
    const bool flat_now = dev_now < kFlatDeviation, flat_before = dev_before < kFlatDeviation;
    if (flat_now || flat_before) {
      result.structure = flat_now == flat_before ? 0.0 : 1.0;
    } else {
      double covariance = 0.0;
      for (std::size_t k = 0; k < now.cells.size(); ++k)
        covariance += (now.cells[k] - mean_now) * (before.cells[k] - mean_before);
      const double correlation = covariance / static_cast<double>(now.cells.size()) / (dev_now * dev_before);
      result.structure = std::clamp(1.0 - correlation, 0.0, 1.0);
    }
    result.score = std::min(result.appearance, result.structure);
    result.cut = threshold > 0.0 && result.score > threshold;
  }
  std::swap(previous_, current_);
  have_previous_ = true;
  return result;
}

}  // namespace taconite::vision
