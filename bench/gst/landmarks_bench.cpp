// Front-end costs of taconitelandmarks and taconitetrack, measured on their own parts (not tests):
//   landmarks  dlib 68-point prediction per face (vision's LandmarkModel::predict), one thread,
//              on a photo's face upright and tilted by 20 degrees (the tilted one is refined);
//   hog        dlib HOG face detection per 640x480 frame at detect-scale 1 and 0.5 (I420 luma);
//   tracker    BoxTracker::update_boxes per frame with 50 boxes moving a few pixels per frame.
// Medians of warm repetitions, wall and thread-CPU time; prints one JSON object. Pipeline frames/s:
// bench/gst/pipeline_fps.sh.
//
// Usage: taconite-landmarks-bench PHOTO [--model FILE] [--repeats N]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <vector>

#include "box_tracker.hpp"
#include "face_landmarks.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using taconite::vision::FaceBox;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double thread_cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

// Median wall and thread-CPU milliseconds of `work` (one warm-up call first). The work is
// single-threaded, so on a machine shared with other jobs the CPU time is the steadier figure.
struct Timing {
  double wall_ms = 0, cpu_ms = 0;
};

template <typename Work>
Timing time_median(int repeats, Work&& work) {
  work();
  std::vector<double> wall, cpu;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    const double cpu_start = thread_cpu_ms();
    work();
    cpu.push_back(thread_cpu_ms() - cpu_start);
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return {median(wall), median(cpu)};
}

// A BGR image as an RGB or I420 (BT.601, limited range: what a camera's SD video carries) image.
class Frame {
 public:
  Frame(const cv::Mat& bgr, taconite::vision::PixelFormat format) {
    using taconite::vision::PixelFormat;
    view_.format = format;
    view_.width = bgr.cols;
    view_.height = bgr.rows;
    if (format == PixelFormat::I420) {
      // OpenCV lays I420 out as one (h * 3/2) x w plane: Y, then U and V at half width and height.
      cv::cvtColor(bgr, pixels_, cv::COLOR_BGR2YUV_I420);
      const std::size_t luma = static_cast<std::size_t>(bgr.cols) * bgr.rows;
      view_.planes = {pixels_.data, pixels_.data + luma, pixels_.data + luma + luma / 4};
      view_.strides = {bgr.cols, bgr.cols / 2, bgr.cols / 2};
    } else {
      cv::cvtColor(bgr, pixels_, cv::COLOR_BGR2RGB);
      view_.planes = {pixels_.data, nullptr, nullptr};
      view_.strides = {static_cast<int>(pixels_.step[0]), 0, 0};
    }
  }
  const taconite::vision::ImageView& get() const { return view_; }

 private:
  cv::Mat pixels_;
  taconite::vision::ImageView view_;
};

// The photo placed on a 640x480 canvas (scaled to fit), as the bench's video frame.
cv::Mat vga_canvas(const cv::Mat& photo) {
  const double fit = std::min(640.0 / photo.cols, 480.0 / photo.rows);
  cv::Mat scaled, canvas(480, 640, CV_8UC3, cv::Scalar::all(0));
  cv::resize(photo, scaled, cv::Size(), fit, fit, cv::INTER_AREA);
  scaled.copyTo(canvas(cv::Rect((640 - scaled.cols) / 2, (480 - scaled.rows) / 2, scaled.cols, scaled.rows)));
  return canvas;
}

// 50 boxes drifting a few pixels per frame, for `frames` frames.
std::vector<std::vector<taconite::vision::Box>> drifting_boxes(int count, int frames) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> position(0, 1800), step(-3, 3);
  std::vector<taconite::vision::Box> boxes;
  for (int i = 0; i < count; ++i) boxes.push_back({position(random), position(random) / 2, 40, 40});
  std::vector<std::vector<taconite::vision::Box>> sequence;
  for (int f = 0; f < frames; ++f) {
    for (auto& box : boxes) box.x += step(random), box.y += step(random);
    sequence.push_back(boxes);
  }
  return sequence;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PHOTO [--model FILE] [--repeats N]\n", argv[0]);
    return 2;
  }
  std::string model_path = "/usr/share/dlib/shape_predictor_68_face_landmarks.dat";
  int repeats = 200;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--model") == 0) model_path = argv[i + 1];
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::max(1, std::atoi(argv[i + 1]));
  }
  const cv::Mat photo = cv::imread(argv[1], cv::IMREAD_COLOR);
  const auto loaded = taconite::vision::LandmarkModel::load(model_path);
  if (photo.empty() || !loaded) {
    std::fprintf(stderr, "error: %s\n", photo.empty() ? "the photo is not readable" : loaded.error().message.c_str());
    return 1;
  }
  const auto& model = loaded.value();

  const cv::Mat canvas = vga_canvas(photo);
  const Frame i420(canvas, taconite::vision::PixelFormat::I420), rgb(canvas, taconite::vision::PixelFormat::Rgb);
  taconite::vision::FaceDetector detector;
  const auto faces = detector.detect(i420.get(), 1.0);
  if (faces.empty()) {
    std::fprintf(stderr, "error: no face found on the photo\n");
    return 1;
  }
  const FaceBox face = faces[0].box;
  cv::Mat tilted;
  const cv::Point2f centre(static_cast<float>(face.x + face.width / 2.0), static_cast<float>(face.y + face.height / 2.0));
  cv::warpAffine(canvas, tilted, cv::getRotationMatrix2D(centre, 20.0, 1.0), canvas.size());
  const Frame tilted_i420(tilted, taconite::vision::PixelFormat::I420);

  const Timing landmarks_i420 = time_median(repeats, [&] { (void)model->predict(i420.get(), face); });
  const Timing landmarks_rgb = time_median(repeats, [&] { (void)model->predict(rgb.get(), face); });
  const Timing landmarks_tilted = time_median(repeats, [&] { (void)model->predict(tilted_i420.get(), face); });
  const Timing landmarks_samples5 = time_median(repeats, [&] { (void)model->predict(i420.get(), face, 5); });
  const int hog_repeats = std::max(3, repeats / 10);
  const Timing hog_full = time_median(hog_repeats, [&] { (void)detector.detect(i420.get(), 1.0); });
  const Timing hog_half = time_median(hog_repeats, [&] { (void)detector.detect(i420.get(), 0.5); });

  const auto sequence = drifting_boxes(50, 300);
  taconite::vision::BoxTracker tracker;
  const taconite::vision::TrackerPolicy policy;
  std::size_t frame = 0;
  const Timing tracker_50 = time_median(static_cast<int>(sequence.size()) - 1, [&] {
    (void)tracker.update_boxes(sequence[frame++ % sequence.size()], policy);
  });

  auto field = [](const char* name, const Timing& t, double unit) {
    std::printf("\"%s\": {\"wall\": %.3f, \"cpu\": %.3f}, ", name, t.wall_ms * unit, t.cpu_ms * unit);
  };
  std::printf("{\"face_px\": %lld, ", static_cast<long long>(face.width));
  field("landmarks_ms_i420", landmarks_i420, 1);
  field("landmarks_ms_rgb", landmarks_rgb, 1);
  field("landmarks_ms_tilted20", landmarks_tilted, 1);
  field("landmarks_ms_box_samples5", landmarks_samples5, 1);
  field("hog_ms_640x480_scale1", hog_full, 1);
  field("hog_ms_640x480_scale0.5", hog_half, 1);
  field("tracker_us_50_rois", tracker_50, 1000);
  std::printf("\"repeats\": %d}\n", repeats);
  return 0;
}
