#include "score_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace taconite::realfaces {

namespace {

constexpr double kLow = -0.5, kHigh = 1.0, kBin = 0.025;
constexpr int kBins = static_cast<int>((kHigh - kLow) / kBin + 0.5);
constexpr int kWidth = 900, kPanelHeight = 260, kMargin = 40;

std::vector<double> shares(const std::vector<double>& scores) {
  std::vector<double> bins(kBins, 0.0);
  for (double s : scores) bins[static_cast<std::size_t>(std::clamp(static_cast<int>((s - kLow) / kBin), 0, kBins - 1))] += 1;
  for (double& b : bins) b /= static_cast<double>(std::max<std::size_t>(scores.size(), 1));
  return bins;
}

int x_of(double score) { return kMargin + static_cast<int>((score - kLow) / (kHigh - kLow) * (kWidth - 2 * kMargin)); }

void draw_panel(cv::Mat& image, const HistogramPanel& panel, int top) {
  const std::vector<double> genuine = shares(panel.scores->genuine), impostor = shares(panel.scores->impostor);
  const double peak = std::max(*std::max_element(genuine.begin(), genuine.end()),
                               *std::max_element(impostor.begin(), impostor.end()));
  const int base = top + kPanelHeight - kMargin, height = kPanelHeight - 2 * kMargin;
  const auto bars = [&](const std::vector<double>& bins, const cv::Scalar& colour) {
    for (int b = 0; b < kBins; ++b) {
      const int h = static_cast<int>(bins[static_cast<std::size_t>(b)] / peak * height);
      if (h > 0)
        cv::rectangle(image, cv::Point(x_of(kLow + b * kBin) + 1, base - h), cv::Point(x_of(kLow + (b + 1) * kBin) - 1, base),
                      colour, cv::FILLED);
    }
  };
  bars(impostor, cv::Scalar(80, 80, 220));  // BGR: red
  bars(genuine, cv::Scalar(60, 170, 60));   // green, drawn over
  cv::line(image, {kMargin, base}, {kWidth - kMargin, base}, cv::Scalar::all(0));
  for (double tick = -0.5; tick <= 1.0 + 1e-9; tick += 0.25) {
    char text[16];
    std::snprintf(text, sizeof text, "%.2f", tick);
    cv::line(image, {x_of(tick), base}, {x_of(tick), base + 5}, cv::Scalar::all(0));
    cv::putText(image, text, {x_of(tick) - 16, base + 20}, cv::FONT_HERSHEY_SIMPLEX, 0.4, cv::Scalar::all(0));
  }
  cv::line(image, {x_of(panel.threshold), top + kMargin - 10}, {x_of(panel.threshold), base}, cv::Scalar(200, 0, 0), 2);
  char legend[200];
  std::snprintf(legend, sizeof legend, "%s: genuine (green, %zu pairs), impostor (red, %zu pairs), threshold %.2f (blue)",
                panel.title.c_str(), panel.scores->genuine.size(), panel.scores->impostor.size(), panel.threshold);
  cv::putText(image, legend, {kMargin, top + 20}, cv::FONT_HERSHEY_SIMPLEX, 0.45, cv::Scalar::all(0));
}

}  // namespace

std::string write_score_histograms(const std::vector<HistogramPanel>& panels, const std::filesystem::path& png) {
  cv::Mat image(kPanelHeight * static_cast<int>(panels.size()), kWidth, CV_8UC3, cv::Scalar::all(255));
  for (std::size_t i = 0; i < panels.size(); ++i) draw_panel(image, panels[i], static_cast<int>(i) * kPanelHeight);
  try {
    if (cv::imwrite(png.string(), image)) return {};
  } catch (const cv::Exception& e) {
    return png.string() + ": cannot be written (" + e.what() + ")";
  }
  return png.string() + ": cannot be written";
}

}  // namespace taconite::realfaces
