#include "score_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

namespace taconite::gallery_cli {

namespace {

namespace fs = std::filesystem;

constexpr int kBins = 60;
constexpr int kLeft = 70, kRight = 20, kTop = 40, kBottom = 60;  // margins around the plot area
const cv::Scalar kGenuineColour(60, 160, 40), kImpostorColour(40, 40, 200), kThresholdColour(200, 90, 0);
const cv::Scalar kInk(30, 30, 30);

gallery::Status check_path(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".png") return Error{ErrorKind::Input, "--plot " + path + ": the plot is a PNG file (name ending .png)"};
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!fs::is_directory(parent, ec))
    return Error{ErrorKind::Input, "--plot " + path + ": " + parent.string() + " is not a directory"};
  for (const std::string& p : {path, path + ".part"}) {  // the file and the temporary name written first
    const fs::file_status status = fs::symlink_status(p, ec);
    if (fs::exists(status) && !fs::is_regular_file(status))
      return Error{ErrorKind::Input, "--plot " + path + ": " + p + " exists and is not a regular file"};
  }
  return gallery::Ok{};
}

// Bin counts of `scores` over [low, high).
std::vector<std::size_t> histogram(std::span<const float> scores, double low, double high) {
  std::vector<std::size_t> bins(kBins, 0);
  for (float s : scores) {
    const int b = static_cast<int>(std::floor((s - low) / (high - low) * kBins));
    ++bins[static_cast<std::size_t>(std::clamp(b, 0, kBins - 1))];
  }
  return bins;
}

void draw_histogram(cv::Mat& image, const std::vector<std::size_t>& bins, const cv::Scalar& colour) {
  const std::size_t tallest = *std::max_element(bins.begin(), bins.end());
  if (tallest == 0) return;
  const double bin_width = static_cast<double>(kPlotWidth - kLeft - kRight) / kBins;
  const int base = kPlotHeight - kBottom, height = kPlotHeight - kTop - kBottom;
  for (int b = 0; b < kBins; ++b) {
    const int top = base - static_cast<int>(std::lround(static_cast<double>(bins[b]) / tallest * height));
    const cv::Rect bar(cv::Point(kLeft + static_cast<int>(b * bin_width), top),
                       cv::Point(kLeft + static_cast<int>((b + 1) * bin_width), base));
    if (bins[b]) cv::rectangle(image, bar, colour, 2);
  }
}

void text(cv::Mat& image, const std::string& s, cv::Point at, const cv::Scalar& colour = kInk) {
  cv::putText(image, s, at, cv::FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv::LINE_AA);
}

}  // namespace

gallery::Status write_score_plot(const std::string& path, std::span<const float> genuine,
                                 std::span<const float> impostors, double threshold) {
  if (gallery::Status s = check_path(path); !s) return s;
  // The x axis spans the scores and the threshold, in whole tenths, within the cosine's [-1, 1].
  double low = threshold, high = threshold;
  for (std::span<const float> scores : {genuine, impostors})
    for (float s : scores) low = std::min<double>(low, s), high = std::max<double>(high, s);
  low = std::max(-1.0, std::floor(low * 10.0) / 10.0);
  high = std::min(1.0, std::ceil(high * 10.0 + 1e-9) / 10.0);
  if (high <= low) high = low + 0.1;

  cv::Mat image(kPlotHeight, kPlotWidth, CV_8UC3, cv::Scalar::all(255));
  draw_histogram(image, histogram(impostors, low, high), kImpostorColour);
  draw_histogram(image, histogram(genuine, low, high), kGenuineColour);
  const int base = kPlotHeight - kBottom, right = kPlotWidth - kRight;
  auto x_of = [&](double v) { return kLeft + static_cast<int>(std::lround((v - low) / (high - low) * (right - kLeft))); };
  cv::line(image, {kLeft, base}, {right, base}, kInk, 1);
  cv::line(image, {kLeft, base}, {kLeft, kTop}, kInk, 1);
  for (int tenth = static_cast<int>(std::lround(low * 10)); tenth <= static_cast<int>(std::lround(high * 10)); ++tenth) {
    const int x = x_of(tenth / 10.0);
    cv::line(image, {x, base}, {x, base + 5}, kInk, 1);
    char label[16];
    std::snprintf(label, sizeof label, "%.1f", tenth / 10.0);
    text(image, label, {x - 12, base + 20});
  }
  text(image, "cosine similarity of the best identity", {kLeft + 200, kPlotHeight - 15});
  cv::Mat vertical(20, 300, CV_8UC3, cv::Scalar::all(255));
  text(vertical, "probes (each histogram to its tallest bin)", {0, 14});
  cv::rotate(vertical, vertical, cv::ROTATE_90_COUNTERCLOCKWISE);
  vertical.copyTo(image(cv::Rect(15, kTop + 20, vertical.cols, vertical.rows)));
  const int tx = x_of(threshold);
  cv::line(image, {tx, kTop}, {tx, base}, kThresholdColour, 2);
  char caption[64];
  std::snprintf(caption, sizeof caption, "threshold %.4f", threshold);
  text(image, caption, {std::min(tx + 5, right - 130), kTop + 15}, kThresholdColour);
  text(image, "genuine (" + std::to_string(genuine.size()) + ")", {kLeft + 10, 25}, kGenuineColour);
  text(image, "impostor (" + std::to_string(impostors.size()) + ")", {kLeft + 200, 25}, kImpostorColour);

  std::vector<unsigned char> png;
  try {
    if (!cv::imencode(".png", image, png)) return Error{ErrorKind::Io, "--plot " + path + ": cannot encode the PNG"};
  } catch (const cv::Exception& e) {
    return Error{ErrorKind::Io, "--plot " + path + ": cannot encode the PNG (" + e.what() + ")"};
  }
  const std::string part = path + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(part, ec);
      return Error{ErrorKind::Io, "--plot " + path + ": cannot be written"};
    }
  }
  std::error_code ec;
  fs::rename(part, path, ec);
  if (ec) {
    fs::remove(part, ec);
    return Error{ErrorKind::Io, "--plot " + path + ": cannot be written (" + ec.message() + ")"};
  }
  return gallery::Ok{};
}

}  // namespace taconite::gallery_cli
