// opencv-dnn-bench: the ONNX export of a bundle's network (bench/torch_bench.py) run by OpenCV's
// DNN module (its own CPU backend), warm median latency and batch throughput, one JSON line.
//   opencv-dnn-bench PREFIX FACE.f32 REF.f32 THREADS BATCH...   (reads PREFIX.b<BATCH>.onnx)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

namespace {

using Clock = std::chrono::steady_clock;

std::vector<float> read_floats(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::copy_n(bytes.data(), values.size() * sizeof(float), reinterpret_cast<char*>(values.data()));
  return values;
}

double cosine(const float* a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < b.size(); ++i) dot += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s PREFIX FACE.f32 REF.f32 THREADS BATCH... (reads PREFIX.b<BATCH>.onnx)\n", argv[0]);
    return 2;
  }
  cv::setNumThreads(std::atoi(argv[4]));
  double load_s = 0;
  const auto load = [&](int batch) {
    const auto load_start = Clock::now();
    cv::dnn::Net net = cv::dnn::readNetFromONNX(std::string(argv[1]) + ".b" + std::to_string(batch) + ".onnx");
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    if (std::getenv("OPENCV_BENCH_NO_FUSION")) net.enableFusion(false);
    if (load_s == 0) load_s = std::chrono::duration<double>(Clock::now() - load_start).count();
    return net;
  };
  const std::vector<float> face = read_floats(argv[2]), reference = read_floats(argv[3]);
  std::string results;
  double cos = 0;
  for (int arg = 5; arg < argc; ++arg) {
    const int batch = std::atoi(argv[arg]);
    cv::dnn::Net net = load(batch);
    cv::Mat blob(std::vector<int>{batch, 3, 112, 112}, CV_32F);
    for (int n = 0; n < batch; ++n) std::copy(face.begin(), face.end(), blob.ptr<float>(n));
    std::vector<double> times;
    const int runs = batch >= 8 ? 4 : 8;  // the first run initialises the layers and is dropped
    for (int i = 0; i < runs; ++i) {
      const auto start = Clock::now();
      net.setInput(blob);
      cv::Mat out = net.forward();
      times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      cos = cosine(out.ptr<float>(0), reference);
    }
    times.erase(times.begin());
    std::sort(times.begin(), times.end());
    const double t = times[times.size() / 2];
    char entry[160];
    std::snprintf(entry, sizeof entry, "%s\"%d\": {\"median_ms\": %.2f, \"faces_per_s\": %.2f, \"reps\": %d}",
                  results.empty() ? "" : ", ", batch, t * 1e3, batch / t, static_cast<int>(times.size()));
    results += entry;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("{\"backend\": \"opencv-dnn\", \"precision\": \"f32\", \"threads\": %s, \"load_s\": %.3f, "
              "\"peak_rss_mib\": %.1f, \"cosine_fp32\": %.6f, \"batches\": {%s}}\n",
              argv[4], load_s, static_cast<double>(usage.ru_maxrss) / 1024.0, cos, results.c_str());
  return 0;
}
