// YuNet's two runtimes (YuNetDetector runtime=onednn and runtime=opencv) on the same frame, in one
// process, interleaved: rounds alternate the runtimes so a shared machine's load hits both alike.
// Per detection (detect_fitted: network + decode + NMS, as taconitedetect calls it): the median
// wall time and the median process CPU time over the rounds' medians, at 640x384 and 320x192.
//   yunet-runtime-bench MODEL.onnx PHOTO [rounds=15] [runs per round=10] [threads=1]
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "yunet_detector.hpp"

namespace {

using taconite::vision::YuNetDetector;
using taconite::vision::YuNetOptions;
using taconite::vision::YuNetRuntime;

// Every thread's: OpenMP's workers count too.
double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::string first_line_with(const char* path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return line;
  return "";
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

// The vector ISA the CPU offers, from /proc/cpuinfo's flags (what oneDNN's jit picks among).
std::string isa() {
  const std::string flags = " " + first_line_with("/proc/cpuinfo", "flags") + " ";
  std::string text;
  for (const char* flag : {"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile"})
    if (flags.find(std::string(" ") + flag + " ") != std::string::npos) text += (text.empty() ? "" : " ") + std::string(flag);
  return text.empty() ? "(no AVX2)" : text;
}

struct Timing {
  std::vector<double> wall, cpu;  // per round: median ms per detection
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx PHOTO [rounds=15] [runs per round=10] [threads=1]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 3 ? std::clamp(std::atoi(argv[3]), 1, 1000) : 15;
  const int runs = argc > 4 ? std::clamp(std::atoi(argv[4]), 1, 1000) : 10;
  const int threads = argc > 5 ? std::clamp(std::atoi(argv[5]), 1, 64) : 1;
  const cv::Mat photo = cv::imread(argv[2], cv::IMREAD_COLOR);
  if (photo.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 2;
  }
  std::printf("%s\nISA: %s\nload average at the start: %s\n", first_line_with("/proc/cpuinfo", "model name").c_str(),
              isa().c_str(), load_average().c_str());
  std::printf("%d thread(s), %d interleaved rounds of %d detections per runtime; medians of the rounds' medians\n\n",
              threads, rounds, runs);
  std::printf("%-9s %-7s %9s %9s %8s  %s\n", "input", "runtime", "wall ms", "CPU ms", "faces", "");
  for (const auto& [width, height] : {std::pair{640, 384}, std::pair{320, 192}}) {
    const YuNetRuntime runtimes[2] = {YuNetRuntime::Onednn, YuNetRuntime::Opencv};
    std::unique_ptr<YuNetDetector> detectors[2];
    for (int r = 0; r < 2; ++r) {
      YuNetOptions options;
      options.input_width = width;
      options.input_height = height;
      options.threads = threads;
      options.runtime = runtimes[r];
      auto loaded = YuNetDetector::load(argv[1], options);
      if (!loaded) {
        std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
        return 1;
      }
      detectors[r] = std::move(loaded.value());
    }
    // The photo scaled into the network input, as taconitedetect hands frames over.
    cv::Mat fitted(height, width, CV_8UC3, cv::Scalar::all(0)), scaled;
    const double s = std::min(static_cast<double>(height) / photo.rows, static_cast<double>(width) / photo.cols);
    cv::resize(photo, scaled, cv::Size(), s, s, cv::INTER_AREA);
    scaled.copyTo(fitted(cv::Rect(0, 0, scaled.cols, scaled.rows)));
    Timing timing[2];
    std::size_t faces[2] = {0, 0};
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 3; ++i) detectors[r]->detect_fitted(fitted, fitted.size());  // warm-up
    for (int round = 0; round < rounds; ++round)
      for (int k = 0; k < 2; ++k) {
        const int r = (round + k) % 2;  // who goes first alternates too
        std::vector<double> wall, cpu;
        for (int i = 0; i < runs; ++i) {
          const double cpu0 = process_cpu_ms();
          const auto t0 = std::chrono::steady_clock::now();
          faces[r] = detectors[r]->detect_fitted(fitted, fitted.size()).size();
          wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
          cpu.push_back(process_cpu_ms() - cpu0);
        }
        timing[r].wall.push_back(median(wall));
        timing[r].cpu.push_back(median(cpu));
      }
    for (int r = 0; r < 2; ++r)
      std::printf("%4dx%-4d %-7s %9.2f %9.2f %8zu  %s\n", width, height, taconite::vision::runtime_name(runtimes[r]),
                  median(timing[r].wall), median(timing[r].cpu), faces[r],
                  r == 0 ? detectors[r]->runtime_reason().c_str() : "");
    std::printf("%-17s %9.2fx %8.2fx  (OpenCV / oneDNN)\n", "", median(timing[1].wall) / median(timing[0].wall),
                median(timing[1].cpu) / median(timing[0].cpu));
  }
  std::printf("\nload average at the end: %s\n", load_average().c_str());
  return 0;
}
