// YuNet face detection (OpenCV Zoo's `face_detection_yunet_2023mar.onnx`) through oneDNN (the
// runtime's OnnxConvNetwork, where built and the model is one it runs exactly) or OpenCV DNN, with
// the decoding of its 12 raw outputs written here: OpenCV 4.6's cv::FaceDetectorYN predates that
// output format. GStreamer-free: a BGR image in, faces with 5 landmarks in the image's pixels out.
#pragma once

#include <opencv2/core.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "taconite/error.hpp"

namespace taconite::vision {

// One detected face, in the pixels of the image given to detect().
struct DetectedFace {
  cv::Rect2f box;
  float score = 0;  // sqrt(class score * objectness), 0..1
  // image-left eye, image-right eye, nose tip, image-left and image-right mouth corner (ArcFace order)
  std::array<cv::Point2f, 5> landmarks;
};

// What runs the network: `Auto` is oneDNN where this build has it and it runs the model, else
// OpenCV DNN.
enum class YuNetRuntime { Auto, Onednn, Opencv };

// "auto", "onednn", "opencv".
const char* runtime_name(YuNetRuntime runtime);

struct YuNetOptions {
  int input_width = 640;   // network input, multiple of 32, 32..kMaxInputSide
  int input_height = 384;
  float score_threshold = 0.6f;  // 0..1
  float nms_threshold = 0.3f;    // IoU above which the weaker of two faces is dropped, 0..1
  int max_faces = 64;            // 1..kMaxFaces, the highest scores kept
  int threads = 1;  // oneDNN's threads per detection, or OpenCV's (process-wide) thread count set at load, 1..64
  YuNetRuntime runtime = YuNetRuntime::Auto;
};

constexpr int kMaxInputSide = 4096;
constexpr int kMaxFaces = 1024;
constexpr std::uintmax_t kMaxModelBytes = 64u << 20;  // YuNet is 230 kB; anything this large is not it

// Ok when `options` are in range, else an Input error saying what is wrong.
Status validate(const YuNetOptions& options);

// A loaded YuNet network. Not thread-safe: one detector per streaming thread.
class YuNetDetector {
 public:
  // Reads and checks the model (a regular file of at most kMaxModelBytes, ONNX, with YuNet 2023mar's
  // 12 outputs of the shapes `options` imply). Returns the detector, or an error naming the file and
  // what was expected: Input for bad options or a file that is not YuNet (or, with runtime Onednn,
  // one oneDNN cannot run exactly, naming the node, or a build without oneDNN), Io for one that
  // cannot be read. Never throws.
  static Result<std::unique_ptr<YuNetDetector>> load(const std::string& model_path, const YuNetOptions& options);

  // Detects faces in an 8-bit 3-channel image of any size, BGR (or RGB with `rgb_order`), scaled to
  // fit the network input with its aspect ratio kept and padded at the right and bottom; boxes are
  // mapped back to the image's pixels. Best score first; nothing for an empty or non-8UC3 image.
  // Throws (cv::Exception, std::bad_alloc, or oneDNN's std::exception) only on a failure of the
  // runtime (the caller's boundary turns it into an error).
  std::vector<DetectedFace> detect(const cv::Mat& image, bool rgb_order = false);

  // The size detect() scales an image of `image_size` to (aspect kept, within the network input).
  cv::Size fitted_size(cv::Size image_size) const;
  // detect() for an image already scaled to fitted_size(original_size) by the caller (who can do it
  // more cheaply, e.g. on a video frame's planes); faces come back in the original's pixels.
  std::vector<DetectedFace> detect_fitted(const cv::Mat& fitted, cv::Size original_size, bool rgb_order = false);

  // The runtime that runs the network (Onednn or Opencv), and why (e.g. what oneDNN refused).
  YuNetRuntime runtime() const { return runtime_; }
  const std::string& runtime_reason() const { return runtime_reason_; }
  // The last detection's raw output `index` (0..11: cls, obj, bbox, kps of stride 8, then 16, 32),
  // cells x width floats (for tests and benches comparing runtimes); empty before the first.
  std::span<const float> raw_output(std::size_t index) const;

  ~YuNetDetector();
  YuNetDetector(const YuNetDetector&) = delete;
  YuNetDetector& operator=(const YuNetDetector&) = delete;

 private:
  struct Network;
  YuNetDetector(std::unique_ptr<Network> network, const YuNetOptions& options);
  std::unique_ptr<Network> network_;
  YuNetOptions options_;
  YuNetRuntime runtime_ = YuNetRuntime::Opencv;
  std::string runtime_reason_;
};

// The raw outputs of one stride, as the network lays them out: `cells` rows of 1 (cls, obj), 4 (bbox)
// and 10 (kps) floats.
struct StrideOutputs {
  int stride = 0;
  int columns = 0;  // input width / stride; cells = columns * rows
  int rows = 0;
  const float* cls = nullptr;
  const float* obj = nullptr;
  const float* bbox = nullptr;
  const float* kps = nullptr;
};

// Decodes every cell scoring at least `score_threshold` into a face in network-input pixels (exposed
// for tests: the arithmetic of the 2023mar format without a network).
std::vector<DetectedFace> decode_stride(const StrideOutputs& outputs, float score_threshold);

// Keeps the best faces: non-maximum suppression at `nms_threshold`, at most `max_faces`, best first.
std::vector<DetectedFace> suppress_overlaps(std::vector<DetectedFace> faces, float nms_threshold, int max_faces);

}  // namespace taconite::vision
