#include "yunet_detector.hpp"

#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"
#ifdef TACONITE_HAVE_ONEDNN_YUNET
#include "cpu/onnx_conv_network.hpp"
#endif

namespace taconite::vision {

namespace {

constexpr std::array<int, 3> kStrides = {8, 16, 32};
constexpr int kMaxCandidates = 5000;  // best-scoring cells that enter the overlap suppression

// exp() of a predicted log-size, bounded so a hostile or broken model cannot make boxes infinite.
float bounded_exp(float log_size) { return std::exp(std::clamp(log_size, -10.0f, 10.0f)); }

std::string output_name(const char* head, int stride) { return std::string(head) + "_" + std::to_string(stride); }

[[noreturn]] void wrong_output(const std::string& problem) {
  throw cv::Exception(cv::Error::StsBadSize, problem, "YuNetDetector::detect", __FILE__, __LINE__);
}

}  // namespace

const char* runtime_name(YuNetRuntime runtime) {
  switch (runtime) {
    case YuNetRuntime::Auto: return "auto";
    case YuNetRuntime::Onednn: return "onednn";
    case YuNetRuntime::Opencv: return "opencv";
  }
  return "?";
}

struct YuNetDetector::Network {
  std::vector<std::string> output_names;  // cls, obj, bbox, kps for strides 8, 16, 32
  cv::dnn::Net net;                       // the OpenCV runtime
#ifdef TACONITE_HAVE_ONEDNN_YUNET
  std::unique_ptr<cpu::OnnxConvNetwork> onednn;  // the oneDNN runtime, when it runs the model
#endif
  // Reused from frame to frame: allocating these megabytes anew for every frame made glibc map and
  // unmap them each time (page faults: half of detect()'s time in a pipeline of its own).
  cv::Mat input, blob;
  std::vector<cv::Mat> outputs;
  std::array<std::span<const float>, 12> raw;  // the last forward's outputs, in output_names' order
};

Status validate(const YuNetOptions& o) {
  const auto wrong = [](std::string problem) { return Error{ErrorKind::Input, std::move(problem)}; };
  auto side_ok = [](int side) { return side >= 32 && side <= kMaxInputSide && side % 32 == 0; };
  if (!side_ok(o.input_width) || !side_ok(o.input_height))
    return wrong("the network input must be a multiple of 32 from 32 to " + std::to_string(kMaxInputSide) +
                 " pixels a side, not " + std::to_string(o.input_width) + "x" + std::to_string(o.input_height));
  if (!(o.score_threshold >= 0 && o.score_threshold <= 1)) return wrong("the score threshold must be within 0..1");
  if (!(o.nms_threshold >= 0 && o.nms_threshold <= 1)) return wrong("the NMS threshold must be within 0..1");
  if (o.max_faces < 1 || o.max_faces > kMaxFaces) return wrong("max faces must be within 1.." + std::to_string(kMaxFaces));
  if (o.threads < 1 || o.threads > 64) return wrong("threads must be within 1..64");
  if (o.runtime != YuNetRuntime::Auto && o.runtime != YuNetRuntime::Onednn && o.runtime != YuNetRuntime::Opencv)
    return wrong("the runtime must be auto, onednn or opencv");
  return Ok{};
}

YuNetDetector::YuNetDetector(std::unique_ptr<Network> network, const YuNetOptions& options)
    : network_(std::move(network)), options_(options) {}

YuNetDetector::~YuNetDetector() = default;

Result<std::unique_ptr<YuNetDetector>> YuNetDetector::load(const std::string& model_path,
                                                           const YuNetOptions& options) {
  if (Status valid = validate(options); !valid) return valid.error();
  const auto not_yunet = [](std::string problem) { return Error{ErrorKind::Input, std::move(problem)}; };
  const std::string expected = "expected OpenCV Zoo's YuNet face detector (face_detection_yunet_2023mar.onnx)";
  std::vector<unsigned char> bytes;
  try {  // a regular file (a FIFO is refused, not waited on) of bounded size, read whole
    const bundle::RegularFile file = bundle::RegularFile::open(model_path);
    if (file.size() > kMaxModelBytes)
      return not_yunet("YuNet model " + model_path + ": " + std::to_string(file.size()) + " bytes, more than the " +
                       std::to_string(kMaxModelBytes) + " a YuNet model may have; " + expected);
    bytes.resize(file.size());
    file.read_all(bytes.data());
  } catch (const Failure& failure) {
    return Error{failure.error().kind, "YuNet model " + failure.error().message};
  }
  auto network = std::make_unique<Network>();
  for (int stride : kStrides)
    for (const char* head : {"cls", "obj", "bbox", "kps"}) network->output_names.push_back(output_name(head, stride));
  YuNetRuntime runtime = YuNetRuntime::Opencv;
  std::string reason = "runtime=opencv";
  if (options.runtime != YuNetRuntime::Opencv) {
#ifdef TACONITE_HAVE_ONEDNN_YUNET
    try {  // oneDNN when it runs every node of the model exactly; else it says which it cannot
      const onnx::OnnxGraph graph = onnx::read_onnx_graph(bytes, model_path);
      network->onednn = std::make_unique<cpu::OnnxConvNetwork>(graph, options.input_height, options.input_width,
                                                              options.threads, model_path);
      if (network->onednn->input().size() != 3u * options.input_height * options.input_width)
        fail(ErrorKind::Input, model_path + ": the input is not 3 planes");
      for (const std::string& name : network->output_names)
        if (network->onednn->output(name).empty()) fail(ErrorKind::Input, model_path + ": it has no output '" + name + "'");
      runtime = YuNetRuntime::Onednn;
      reason = std::string(options.runtime == YuNetRuntime::Auto ? "auto" : "runtime=onednn") + ": oneDNN f32, " +
               std::to_string(options.threads) + " thread(s): " + network->onednn->implementations();
    } catch (const Failure& failure) {
      network->onednn.reset();
      if (options.runtime == YuNetRuntime::Onednn)
        return Error{failure.error().kind, "YuNet model " + failure.error().message + " (runtime=onednn)"};
      reason = "auto: OpenCV DNN, as oneDNN cannot run it: " + failure.error().message;
    } catch (const std::bad_alloc&) {
      network->onednn.reset();
      if (options.runtime == YuNetRuntime::Onednn) return Error{ErrorKind::Input, "YuNet model " + model_path + ": out of memory"};
      reason = "auto: OpenCV DNN, as oneDNN ran out of memory";
    }
#else
    if (options.runtime == YuNetRuntime::Onednn)
      return not_yunet("YuNet model " + model_path + ": runtime=onednn, but this build has no oneDNN");
    reason = "auto: OpenCV DNN (this build has no oneDNN)";
#endif
  }
  try {
    if (runtime == YuNetRuntime::Opencv) {
      network->net = cv::dnn::readNetFromONNX(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      if (network->net.empty())
        return not_yunet("YuNet model " + model_path + ": not a readable ONNX network; " + expected);
      network->net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      network->net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
      cv::setNumThreads(options.threads);  // OpenCV's pool is process-wide: the last detector loaded sets it
      const std::vector<std::string> outputs = network->net.getUnconnectedOutLayersNames();
      for (const std::string& name : network->output_names)
        if (std::find(outputs.begin(), outputs.end(), name) == outputs.end())
          return not_yunet("YuNet model " + model_path + ": it has no output '" + name + "'; " + expected +
                           " with outputs cls/obj/bbox/kps_{8,16,32}");
    }
    auto detector = std::unique_ptr<YuNetDetector>(new YuNetDetector(std::move(network), options));
    detector->runtime_ = runtime;
    detector->runtime_reason_ = std::move(reason);
    // One forward pass on a blank frame proves the outputs have the shapes the decoder reads.
    cv::Mat blank(options.input_height, options.input_width, CV_8UC3, cv::Scalar::all(0));
    detector->detect(blank);
    return detector;
  } catch (const cv::Exception& e) {
    return not_yunet("YuNet model " + model_path + ": " + (runtime == YuNetRuntime::Onednn ? "oneDNN" : "OpenCV") +
                     " could not use it (" + std::string(e.what()) + "); " + expected);
  } catch (const std::exception& e) {
    return not_yunet("YuNet model " + model_path + ": " + e.what() + "; " + expected);
  }
}

std::span<const float> YuNetDetector::raw_output(std::size_t index) const {
  return index < network_->raw.size() ? network_->raw[index] : std::span<const float>();
}

std::vector<DetectedFace> decode_stride(const StrideOutputs& o, float score_threshold) {
  std::vector<DetectedFace> faces;
  const float s = static_cast<float>(o.stride);
  for (int row = 0; row < o.rows; ++row)
    for (int col = 0; col < o.columns; ++col) {
      const std::size_t cell = static_cast<std::size_t>(row) * o.columns + col;
      const float cls = std::clamp(o.cls[cell], 0.0f, 1.0f);  // NaN fails both tests below
      const float obj = std::clamp(o.obj[cell], 0.0f, 1.0f);
      const float score = std::sqrt(cls * obj);
      if (!(score >= score_threshold)) continue;
      const float* b = o.bbox + 4 * cell;
      const float* k = o.kps + 10 * cell;
      DetectedFace face;
      face.score = score;
      const float cx = (col + b[0]) * s, cy = (row + b[1]) * s;
      const float w = bounded_exp(b[2]) * s, h = bounded_exp(b[3]) * s;
      face.box = cv::Rect2f(cx - w / 2, cy - h / 2, w, h);
      for (int p = 0; p < 5; ++p) face.landmarks[p] = cv::Point2f((col + k[2 * p]) * s, (row + k[2 * p + 1]) * s);
      const bool finite = std::isfinite(face.box.x) && std::isfinite(face.box.y) &&
                          std::all_of(k, k + 10, [](float v) { return std::isfinite(v); });
      if (finite) faces.push_back(face);
    }
  return faces;
}

std::vector<DetectedFace> suppress_overlaps(std::vector<DetectedFace> faces, float nms_threshold, int max_faces) {
  std::vector<cv::Rect2d> boxes;
  std::vector<float> scores;
  for (const DetectedFace& f : faces) {
    boxes.emplace_back(f.box.x, f.box.y, f.box.width, f.box.height);
    scores.push_back(f.score);
  }
  std::vector<int> keep;
  // score threshold 0: the decoder already applied it; NMSBoxes sorts by score, best first. Its
  // top_k caps the candidates *before* suppression (bounding its quadratic work), so the faces kept
  // are capped after it: a crowd's overlapping duplicates must not use up max_faces.
  cv::dnn::NMSBoxes(boxes, scores, 0.0f, nms_threshold, keep, 1.0f, kMaxCandidates);
  if (keep.size() > static_cast<std::size_t>(std::max(0, max_faces))) keep.resize(static_cast<std::size_t>(max_faces));
  std::vector<DetectedFace> kept;
  kept.reserve(keep.size());
  for (int i : keep) kept.push_back(faces[static_cast<std::size_t>(i)]);
  return kept;
}

cv::Size YuNetDetector::fitted_size(cv::Size image_size) const {
  const int in_w = options_.input_width, in_h = options_.input_height;
  const double scale = std::min(static_cast<double>(in_w) / std::max(1, image_size.width),
                                static_cast<double>(in_h) / std::max(1, image_size.height));
  return {std::clamp(static_cast<int>(std::lround(image_size.width * scale)), 1, in_w),
          std::clamp(static_cast<int>(std::lround(image_size.height * scale)), 1, in_h)};
}

std::vector<DetectedFace> YuNetDetector::detect(const cv::Mat& image, bool rgb_order) {
  if (image.empty() || image.type() != CV_8UC3) return {};
  const cv::Size fit = fitted_size(image.size());
  cv::Mat fitted;
  cv::resize(image, fitted, fit, 0, 0, fit.width < image.cols ? cv::INTER_AREA : cv::INTER_LINEAR);
  return detect_fitted(fitted, image.size(), rgb_order);
}

std::vector<DetectedFace> YuNetDetector::detect_fitted(const cv::Mat& fitted, cv::Size original_size,
                                                       bool rgb_order) {
  if (fitted.empty() || fitted.type() != CV_8UC3 || fitted.size() != fitted_size(original_size)) return {};
  const int in_w = options_.input_width, in_h = options_.input_height;
  Network& n = *network_;
  n.input.create(in_h, in_w, CV_8UC3);
  n.input.setTo(cv::Scalar::all(0));
  fitted.copyTo(n.input(cv::Rect(0, 0, fitted.cols, fitted.rows)));

  // The network takes BGR, float 0..255, NCHW; swapping R and B here costs nothing extra.
  if (runtime_ == YuNetRuntime::Onednn) {
#ifdef TACONITE_HAVE_ONEDNN_YUNET
    const int blob_shape[] = {1, 3, in_h, in_w};
    cv::Mat blob(4, blob_shape, CV_32F, n.onednn->input().data());  // written in place: create() keeps it
    cv::dnn::blobFromImage(n.input, blob, 1.0, cv::Size(), cv::Scalar(), rgb_order);
    if (blob.ptr<float>() != n.onednn->input().data()) wrong_output("the input blob was reallocated");
    n.onednn->run();
    for (std::size_t j = 0; j < n.raw.size(); ++j) n.raw[j] = n.onednn->output(n.output_names[j]);
#endif
  } else {
    cv::dnn::blobFromImage(n.input, n.blob, 1.0, cv::Size(), cv::Scalar(), rgb_order);
    n.net.setInput(n.blob);
    n.net.forward(n.outputs, n.output_names);
    for (std::size_t j = 0; j < n.raw.size(); ++j) {
      const cv::Mat& m = n.outputs.at(j);
      if (m.type() != CV_32F || !m.isContinuous()) wrong_output("output " + n.output_names[j] + " is not float32");
      n.raw[j] = {m.ptr<float>(), m.total()};
    }
  }

  std::vector<DetectedFace> faces;
  for (std::size_t i = 0; i < kStrides.size(); ++i) {
    StrideOutputs o;
    o.stride = kStrides[i];
    o.columns = in_w / o.stride;
    o.rows = in_h / o.stride;
    const std::size_t cells = static_cast<std::size_t>(o.columns) * o.rows;
    const std::span<const float>* m = &n.raw[4 * i];
    const std::array<std::size_t, 4> widths = {1, 1, 4, 10};
    for (std::size_t j = 0; j < 4; ++j)
      if (m[j].size() != cells * widths[j])
        wrong_output("output " + n.output_names[4 * i + j] + " has " + std::to_string(m[j].size()) + " values, expected " +
                     std::to_string(cells) + "x" + std::to_string(widths[j]));
    o.cls = m[0].data();
    o.obj = m[1].data();
    o.bbox = m[2].data();
    o.kps = m[3].data();
    std::vector<DetectedFace> found = decode_stride(o, options_.score_threshold);
    faces.insert(faces.end(), found.begin(), found.end());
  }
  faces = suppress_overlaps(std::move(faces), options_.nms_threshold, options_.max_faces);
  const float back_x = static_cast<float>(original_size.width) / fitted.cols;
  const float back_y = static_cast<float>(original_size.height) / fitted.rows;
  for (DetectedFace& f : faces) {
    f.box = cv::Rect2f(f.box.x * back_x, f.box.y * back_y, f.box.width * back_x, f.box.height * back_y);
    for (cv::Point2f& p : f.landmarks) p = cv::Point2f(p.x * back_x, p.y * back_y);
  }
  return faces;
}

}  // namespace taconite::vision
