#include "score_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace taconite::plot {

namespace {

namespace fs = std::filesystem;

constexpr int kBins = 60;
constexpr int kLeft = 70, kRight = 20, kTop = 40, kBottom = 60;  // margins around a panel's plot area
const cv::Scalar kGenuineColour(60, 160, 40), kImpostorColour(40, 40, 200), kThresholdColour(200, 90, 0);
const cv::Scalar kInk(30, 30, 30);
constexpr double kTextScale = 0.45;

gallery::Status check_path(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".png") return Error{ErrorKind::Input, path + ": the plot is a PNG file (name ending .png)"};
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!fs::is_directory(parent, ec)) return Error{ErrorKind::Input, path + ": " + parent.string() + " is not a directory"};
  for (const std::string& p : {path, path + ".part"}) {  // the file and the temporary name written first
    const fs::file_status status = fs::symlink_status(p, ec);
    if (fs::exists(status) && !fs::is_regular_file(status))
      return Error{ErrorKind::Input, path + ": " + p + " exists and is not a regular file"};
  }
  return gallery::Ok{};
}

// The x axis: every finite score and threshold, in whole tenths, within [-1, 1].
struct Axis {
  double low = 0.0, high = 0.0;
  int x_of(double v) const {
    const double at = std::isnan(v) ? 0.0 : std::clamp((v - low) / (high - low), 0.0, 1.0);
    return kLeft + static_cast<int>(std::lround(at * (kPlotWidth - kRight - kLeft)));
  }
};

Axis axis_of(const ScorePlot& plot) {
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (const ScorePanel& panel : plot.panels)
    for (std::span<const double> scores : {panel.genuine, panel.impostor, std::span<const double>(&panel.threshold, 1)})
      for (double s : scores)
        if (std::isfinite(s)) low = std::min(low, s), high = std::max(high, s);
  if (low > high) low = 0.0, high = 1.0;  // nothing finite to show
  Axis axis;
  axis.low = std::max(-1.0, std::floor(low * 10.0) / 10.0);
  axis.high = std::min(1.0, std::ceil(high * 10.0 + 1e-9) / 10.0);
  if (!(axis.high > axis.low)) axis.low = std::min(axis.low, 0.9), axis.high = axis.low + 0.1;
  return axis;
}

// Bin counts of the finite `scores` over the axis.
std::vector<std::size_t> histogram(std::span<const double> scores, const Axis& axis) {
  std::vector<std::size_t> bins(kBins, 0);
  for (double s : scores) {
    if (!std::isfinite(s)) continue;
    const double at = std::clamp((s - axis.low) / (axis.high - axis.low) * kBins, 0.0, kBins - 1.0);
    ++bins[static_cast<std::size_t>(at)];
  }
  return bins;
}

void draw_histogram(cv::Mat& image, int top, const std::vector<std::size_t>& bins, const cv::Scalar& colour) {
  const std::size_t tallest = *std::max_element(bins.begin(), bins.end());
  if (tallest == 0) return;
  const double bin_width = static_cast<double>(kPlotWidth - kLeft - kRight) / kBins;
  const int base = top + kPanelHeight - kBottom, height = kPanelHeight - kTop - kBottom;
  for (int b = 0; b < kBins; ++b) {
    if (!bins[b]) continue;
    const int bar_top = base - static_cast<int>(std::lround(static_cast<double>(bins[b]) / tallest * height));
    cv::rectangle(image, cv::Rect(cv::Point(kLeft + static_cast<int>(b * bin_width), bar_top),
                                  cv::Point(kLeft + static_cast<int>((b + 1) * bin_width), base)),
                  colour, 2);
  }
}

// Draws `s` with its baseline's left end at `at`; returns where the next word may start.
int text(cv::Mat& image, const std::string& s, cv::Point at, const cv::Scalar& colour = kInk) {
  cv::putText(image, s, at, cv::FONT_HERSHEY_SIMPLEX, kTextScale, colour, 1, cv::LINE_AA);
  int baseline = 0;
  return at.x + cv::getTextSize(s, cv::FONT_HERSHEY_SIMPLEX, kTextScale, 1, &baseline).width + 16;
}

void draw_panel(cv::Mat& image, int top, const ScorePanel& panel, const ScorePlot& plot, const Axis& axis) {
  draw_histogram(image, top, histogram(panel.impostor, axis), kImpostorColour);
  draw_histogram(image, top, histogram(panel.genuine, axis), kGenuineColour);
  const int base = top + kPanelHeight - kBottom, right = kPlotWidth - kRight;
  cv::line(image, {kLeft, base}, {right, base}, kInk, 1);
  cv::line(image, {kLeft, base}, {kLeft, top + kTop}, kInk, 1);
  for (int tenth = static_cast<int>(std::lround(axis.low * 10)); tenth <= static_cast<int>(std::lround(axis.high * 10));
       ++tenth) {
    const int x = axis.x_of(tenth / 10.0);
    cv::line(image, {x, base}, {x, base + 5}, kInk, 1);
    char label[16];
    std::snprintf(label, sizeof label, "%.1f", tenth / 10.0);
    text(image, label, {x - 12, base + 20});
  }
  text(image, plot.x_axis, {kLeft + 200, top + kPanelHeight - 15});
  // The vertical axis' label, written sideways into its own strip.
  const std::string counted = plot.counted + " (each histogram to its tallest bin)";
  int baseline = 0;
  const int length = std::min(cv::getTextSize(counted, cv::FONT_HERSHEY_SIMPLEX, kTextScale, 1, &baseline).width + 4,
                              kPanelHeight - kTop - kBottom - 20);
  cv::Mat vertical(20, length, CV_8UC3, cv::Scalar::all(255));
  text(vertical, counted, {0, 14});
  cv::rotate(vertical, vertical, cv::ROTATE_90_COUNTERCLOCKWISE);
  vertical.copyTo(image(cv::Rect(15, top + kTop + 20, vertical.cols, vertical.rows)));

  const int tx = axis.x_of(panel.threshold);
  cv::line(image, {tx, top + kTop}, {tx, base}, kThresholdColour, 2);
  char caption[64];
  std::snprintf(caption, sizeof caption, "threshold %.4f", panel.threshold);
  text(image, caption, {std::min(tx + 5, right - 130), top + kTop + 15}, kThresholdColour);
  int x = kLeft + 10;
  if (!panel.title.empty()) x = text(image, panel.title, {x, top + 25});
  x = text(image, "genuine (" + std::to_string(panel.genuine.size()) + ")", {x, top + 25}, kGenuineColour);
  text(image, "impostor (" + std::to_string(panel.impostor.size()) + ")", {x, top + 25}, kImpostorColour);
}

gallery::Status write_png(const std::string& path, const cv::Mat& image) {
  std::vector<unsigned char> png;
  try {
    if (!cv::imencode(".png", image, png)) return Error{ErrorKind::Io, path + ": cannot encode the PNG"};
  } catch (const cv::Exception& e) {
    return Error{ErrorKind::Io, path + ": cannot encode the PNG (" + e.what() + ")"};
  }
  const std::string part = path + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(part, ec);
      return Error{ErrorKind::Io, path + ": cannot be written"};
    }
  }
  std::error_code ec;
  fs::rename(part, path, ec);
  if (ec) {
    fs::remove(part, ec);
    return Error{ErrorKind::Io, path + ": cannot be written (" + ec.message() + ")"};
  }
  return gallery::Ok{};
}

}  // namespace

gallery::Status write_score_plot(const std::string& path, const ScorePlot& plot) {
  if (plot.panels.empty() || plot.panels.size() > kMaxPanels)
    return Error{ErrorKind::Input, path + ": a score plot has 1.." + std::to_string(kMaxPanels) + " panels, not " +
                                       std::to_string(plot.panels.size())};
  if (gallery::Status s = check_path(path); !s) return s;
  const Axis axis = axis_of(plot);
  cv::Mat image(kPanelHeight * static_cast<int>(plot.panels.size()), kPlotWidth, CV_8UC3, cv::Scalar::all(255));
  for (std::size_t i = 0; i < plot.panels.size(); ++i)
    draw_panel(image, static_cast<int>(i) * kPanelHeight, plot.panels[i], plot, axis);
  return write_png(path, image);
}

}  // namespace taconite::plot
