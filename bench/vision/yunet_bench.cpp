// taconitedetect's detector against its peer, in one process: the bare OpenCV DNN forward pass of
// the same YuNet model on an already-sized input (what any YuNet user pays at the least) vs
// YuNetDetector::detect on whole frames (scale to fit + forward + decode + NMS + mapping back).
// Medians of `runs` after warm-up, one OpenCV thread unless given.
//   yunet-bench MODEL.onnx PHOTO [runs=50] [threads=1] [input WxH=640x384]
#include <opencv2/dnn.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "yunet_detector.hpp"

namespace {

double median_ms(int runs, const std::function<void()>& work) {
  for (int i = 0; i < 3; ++i) work();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

// The photo placed on a black frame of width x height (scaled to fit its height).
cv::Mat frame_of(const cv::Mat& photo, int width, int height) {
  cv::Mat frame(height, width, CV_8UC3, cv::Scalar::all(0)), scaled;
  const double s = std::min(static_cast<double>(height) / photo.rows, static_cast<double>(width) / photo.cols);
  cv::resize(photo, scaled, cv::Size(), s, s);
  scaled.copyTo(frame(cv::Rect(0, 0, scaled.cols, scaled.rows)));
  return frame;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx PHOTO [runs=50] [threads=1] [WxH=640x384]\n", argv[0]);
    return 2;
  }
  const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 50;
  taconite::vision::YuNetOptions options;
  // What detect() adds around OpenCV's forward (yunet-runtime-bench compares oneDNN with OpenCV).
  options.runtime = taconite::vision::YuNetRuntime::Opencv;
  options.threads = argc > 4 ? std::atoi(argv[4]) : 1;
  if (argc > 5 && std::sscanf(argv[5], "%dx%d", &options.input_width, &options.input_height) != 2) return 2;
  const cv::Mat photo = cv::imread(argv[2], cv::IMREAD_COLOR);
  if (photo.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 2;
  }
  auto loaded = taconite::vision::YuNetDetector::load(argv[1], options);
  if (!loaded) {
    std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
    return 1;
  }
  auto& detector = *loaded.value();

  // The peer: OpenCV DNN alone on an input already at the network's size.
  cv::dnn::Net net = cv::dnn::readNetFromONNX(argv[1]);
  std::vector<std::string> names;
  for (int s : {8, 16, 32})
    for (const char* head : {"cls", "obj", "bbox", "kps"}) names.push_back(std::string(head) + "_" + std::to_string(s));
  const cv::Mat input = frame_of(photo, options.input_width, options.input_height);
  // Blob and outputs reused, as the detector does: fresh megabyte buffers per call cost glibc page
  // faults that would make the peer look twice as slow as it is.
  cv::Mat blob;
  std::vector<cv::Mat> out;
  const double bare = median_ms(runs, [&] {
    cv::dnn::blobFromImage(input, blob);
    net.setInput(blob);
    net.forward(out, names);
  });
  std::printf("YuNet %dx%d, %d OpenCV thread(s), median of %d runs\n", options.input_width, options.input_height,
              cv::getNumThreads(), runs);
  std::printf("%-34s %8.2f ms\n", "bare OpenCV DNN forward (peer)", bare);
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{640, 384}, {640, 480}, {1280, 720}, {1920, 1080}}) {
    const cv::Mat frame = frame_of(photo, w, h);
    std::size_t faces = 0;
    const double ours = median_ms(runs, [&] { faces = detector.detect(frame).size(); });
    std::printf("detect() on a %4dx%-4d frame       %8.2f ms  %.2fx the peer, %zu face(s)\n", w, h, ours, ours / bare,
                faces);
  }
  return 0;
}
