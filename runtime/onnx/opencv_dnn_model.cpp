// The opencv-dnn backend: an ONNX face embedder run by OpenCV DNN (cv::dnn::readNetFromONNX).
// The model keeps the file's bytes; every session parses its own cv::dnn::Net from them, as a Net
// is not safe for concurrent forwards.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"
#include "onnx/declared_graph.hpp"
#include "onnx/onnx_model.hpp"

namespace taconite::onnx {

namespace {

// OpenCV logs its DNN errors on stderr; the library never prints. While any of our calls into
// OpenCV DNN runs, its log level is silent (restored when the last one ends).
class QuietOpenCvLog {
 public:
  QuietOpenCvLog() {
    std::lock_guard<std::mutex> guard(lock());
    if (active()++ == 0) saved() = cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  }
  ~QuietOpenCvLog() {
    std::lock_guard<std::mutex> guard(lock());
    if (--active() == 0) cv::utils::logging::setLogLevel(saved());
  }
  QuietOpenCvLog(const QuietOpenCvLog&) = delete;
  QuietOpenCvLog& operator=(const QuietOpenCvLog&) = delete;

 private:
  static std::mutex& lock() {
    static std::mutex m;
    return m;
  }
  static int& active() {
    static int n = 0;
    return n;
  }
  static cv::utils::logging::LogLevel& saved() {
    static cv::utils::logging::LogLevel level = cv::utils::logging::LOG_LEVEL_WARNING;
    return level;
  }
};

std::string shape_text(const cv::Mat& m) {
  std::string text;
  for (int d = 0; d < m.dims; ++d) text += (d ? "x" : "") + std::to_string(m.size[d]);
  return text;
}

cv::dnn::Net parse_network(const std::vector<uchar>& bytes, const std::string& origin) {
  try {
    QuietOpenCvLog quiet;
    cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes);
    if (net.empty()) fail(ErrorKind::Bundle, origin + ": not an ONNX model OpenCV DNN can read (empty network)");
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    return net;
  } catch (const cv::Exception& e) {
    fail(ErrorKind::Bundle, origin + ": not an ONNX model OpenCV DNN can read: " + e.what());
  }
}

bool matches(std::int64_t declared, std::int64_t wanted) { return declared == kUnknownDim || declared == wanted; }

const DeclaredTensor* find_tensor(const std::vector<DeclaredTensor>& tensors, const std::string& name) {
  auto it = std::find_if(tensors.begin(), tensors.end(), [&](const DeclaredTensor& t) { return t.name == name; });
  return it == tensors.end() ? nullptr : &*it;
}

std::string names_of(const std::vector<DeclaredTensor>& tensors) {
  std::string names;
  for (const DeclaredTensor& t : tensors) names += (names.empty() ? "'" : ", '") + t.name + "'";
  return names.empty() ? "none" : names;
}

// The declared input must be 1x3xHxW at the description's size, the output 1xD with D = dim.
void check_declared(const DeclaredGraph& graph, const EmbedderDescription& d, const std::string& model,
                    const std::string& description) {
  if (graph.inputs.size() != 1)
    fail(ErrorKind::Bundle, model + ": has " + std::to_string(graph.inputs.size()) + " inputs (" +
                                names_of(graph.inputs) + "); a face embedder takes one, the face");
  const DeclaredTensor* input = find_tensor(graph.inputs, d.input_name);
  if (input == nullptr)
    fail(ErrorKind::Bundle, model + ": has no input '" + d.input_name + "' (" + description +
                                " input.name); its input: " + names_of(graph.inputs));
  const Preprocessing& p = d.preprocessing;
  const std::vector<std::int64_t>& in = input->dims;
  if (in.size() != 4 || !matches(in[0], 1) || !matches(in[1], 3) || !matches(in[2], p.height) ||
      !matches(in[3], p.width))
    fail(ErrorKind::Bundle, model + ": input '" + d.input_name + "' is " + dims_text(in) +
                                "; expected 1x3x" + std::to_string(p.height) + "x" + std::to_string(p.width) +
                                " (one face, 3 colour planes, " + description + " input.height x input.width)");
  const DeclaredTensor* output = find_tensor(graph.outputs, d.output_name);
  if (output == nullptr)
    fail(ErrorKind::Bundle, model + ": has no output '" + d.output_name + "' (" + description +
                                " output.name); its outputs: " + names_of(graph.outputs));
  const std::vector<std::int64_t>& out = output->dims;
  if (out.size() != 2 || !matches(out[0], 1))
    fail(ErrorKind::Bundle, model + ": output '" + d.output_name + "' is " + dims_text(out) +
                                "; expected 1xD (one embedding of D values)");
  if (!matches(out[1], d.dim))
    fail(ErrorKind::Bundle, model + ": output '" + d.output_name + "' is " + dims_text(out) + ", but " +
                                description + " output.dim is " + std::to_string(d.dim));
}

class DnnSession final : public OnnxSession {
 public:
  DnnSession(cv::dnn::Net net, const EmbedderDescription& description, const std::string& origin, bool batches)
      : net_(std::move(net)), d_(description), origin_(origin), batches_(batches) {}

  std::vector<Embedding> embed(std::span<const FaceChw> faces) override {
    for (std::size_t i = 0; i < faces.size(); ++i) check_face(faces[i], i);
    std::vector<Embedding> embeddings;
    embeddings.reserve(faces.size());
    if (batches_ && faces.size() > 1) {
      embeddings = forward(faces);
    } else {
      for (const FaceChw& face : faces) embeddings.push_back(std::move(forward({&face, 1}).front()));
    }
    for (std::size_t i = 0; i < embeddings.size(); ++i)
      if (!std::all_of(embeddings[i].begin(), embeddings[i].end(), [](float v) { return std::isfinite(v); }))
        fail(ErrorKind::Device, origin_ + ": the network's output '" + d_.output_name + "' for face " +
                                    std::to_string(i) + " is not finite (NaN or Inf) although its input is");
    return embeddings;
  }

  // The raw forward of faces already checked: one blob of N faces, N embeddings of dim values.
  std::vector<Embedding> forward(std::span<const FaceChw> faces) {
    const Preprocessing& p = d_.preprocessing;
    const std::size_t face_values = 3u * static_cast<std::size_t>(p.height) * static_cast<std::size_t>(p.width);
    const int shape[4] = {static_cast<int>(faces.size()), 3, p.height, p.width};
    cv::Mat blob(4, shape, CV_32F);
    for (std::size_t i = 0; i < faces.size(); ++i)
      std::copy(faces[i].data.begin(), faces[i].data.end(), blob.ptr<float>() + i * face_values);
    cv::Mat out;
    try {
      QuietOpenCvLog quiet;
      net_.setInput(blob, d_.input_name);
      out = net_.forward(d_.output_name);
    } catch (const cv::Exception& e) {
      fail(ErrorKind::Device, origin_ + ": the OpenCV DNN forward of " + std::to_string(faces.size()) +
                                  " face(s) failed: " + e.what());
    }
    const std::size_t dim = static_cast<std::size_t>(d_.dim);
    if (out.type() != CV_32F || !out.isContinuous() || out.total() != faces.size() * dim)
      fail(ErrorKind::Bundle, origin_ + ": output '" + d_.output_name + "' of " + std::to_string(faces.size()) +
                                  " face(s) is " + shape_text(out) + "; expected " + std::to_string(dim) +
                                  " float values per face (output.dim of the description)");
    std::vector<Embedding> embeddings(faces.size());
    for (std::size_t i = 0; i < faces.size(); ++i)
      embeddings[i].assign(out.ptr<float>() + i * dim, out.ptr<float>() + (i + 1) * dim);
    return embeddings;
  }

 private:
  void check_face(const FaceChw& face, std::size_t index) const {
    const Preprocessing& p = d_.preprocessing;
    const std::string which = "face " + std::to_string(index) + ": ";
    if (face.channels != 3 || face.height != p.height || face.width != p.width)
      fail(ErrorKind::Input, which + "is " + std::to_string(face.channels) + "x" + std::to_string(face.height) + "x" +
                                 std::to_string(face.width) + " (CxHxW), the model expects 3x" +
                                 std::to_string(p.height) + "x" + std::to_string(p.width));
    const std::size_t expected = 3u * static_cast<std::size_t>(p.height) * static_cast<std::size_t>(p.width);
    if (face.data.size() != expected)
      fail(ErrorKind::Input, which + "data holds " + std::to_string(face.data.size()) + " floats, expected " +
                                 std::to_string(expected) + " (channels*height*width, CHW)");
    const auto bad = std::find_if(face.data.begin(), face.data.end(), [](float v) { return !std::isfinite(v); });
    if (bad != face.data.end())
      fail(ErrorKind::Input, which + "value " + std::to_string(bad - face.data.begin()) + " is not finite");
  }

  cv::dnn::Net net_;
  const EmbedderDescription& d_;
  const std::string& origin_;
  bool batches_;
};

class DnnModel final : public OnnxModel {
 public:
  DnnModel(std::vector<uchar> bytes, EmbedderDescription description, std::string origin)
      : bytes_(std::move(bytes)), d_(std::move(description)), origin_(std::move(origin)) {}

  const EmbedderDescription& description() const override { return d_; }
  const std::vector<std::string>& diagnostics() const override { return diagnostics_; }
  std::unique_ptr<OnnxSession> new_session() const override {
    return std::make_unique<DnnSession>(parse_network(bytes_, origin_), d_, origin_, batches_);
  }

  // Runs two different faces one by one and as one blob: the network batches when the blob's
  // output is their two embeddings (a network that reshapes to a fixed batch of 1 does not).
  void probe(cv::dnn::Net net) {
    const Preprocessing& p = d_.preprocessing;
    const std::size_t n = 3u * static_cast<std::size_t>(p.height) * static_cast<std::size_t>(p.width);
    std::vector<float> zeros(n, 0.0f), ramp(n);
    for (std::size_t i = 0; i < n; ++i) ramp[i] = static_cast<float>(i % 97) / 48.0f - 1.0f;
    const FaceChw faces[2] = {{zeros, 3, p.height, p.width}, {ramp, 3, p.height, p.width}};
    DnnSession session(std::move(net), d_, origin_, false);
    const Embedding first = session.forward({&faces[0], 1}).front();
    const Embedding second = session.forward({&faces[1], 1}).front();
    std::vector<Embedding> both;
    std::string refusal;
    try {
      both = session.forward(faces);
    } catch (const Failure& failure) {
      refusal = failure.error().message;
    }
    batches_ = refusal.empty() && close(both[0], first) && close(both[1], second);
    if (!batches_)
      diagnostics_.push_back(origin_ + ": the network does not run a batch of faces as one blob (" +
                             (refusal.empty() ? std::string("its embeddings differ from the faces run one by one")
                                              : refusal) +
                             "); embed_batch runs its faces one by one");
  }

 private:
  static bool close(const Embedding& a, const Embedding& b) {
    float scale = 1.0f, diff = 0.0f;
    for (std::size_t i = 0; i < a.size(); ++i) {
      scale = std::max(scale, std::abs(b[i]));
      diff = std::max(diff, std::abs(a[i] - b[i]));
    }
    return diff <= 1e-4f * scale;  // NaN compares false: a NaN network is not trusted to batch
  }

  std::vector<uchar> bytes_;
  EmbedderDescription d_;
  std::string origin_;
  bool batches_ = false;
  std::vector<std::string> diagnostics_;
};

std::vector<uchar> read_model_file(const std::filesystem::path& path) {
  const bundle::RegularFile file = bundle::RegularFile::open(path);
  if (file.size() > kMaxModelBytes)
    fail(ErrorKind::Bundle, path.string() + ": " + std::to_string(file.size()) + " bytes, more than an ONNX face " +
                                "embedder may hold here (" + std::to_string(kMaxModelBytes) + ")");
  std::vector<uchar> bytes(static_cast<std::size_t>(file.size()));
  file.read_all(bytes.data());
  return bytes;
}

}  // namespace

std::shared_ptr<const OnnxModel> load_onnx_model(const std::filesystem::path& model,
                                                 const std::filesystem::path& description, int threads) {
  const std::string origin = model.string();
  std::vector<uchar> bytes = read_model_file(model);
  EmbedderDescription d = read_embedder_description(description);
  cv::dnn::Net net = parse_network(bytes, origin);
  check_declared(read_declared_graph(bytes, origin), d, origin, description.string());
  {
    QuietOpenCvLog quiet;
    if (cv::getNumThreads() != threads) cv::setNumThreads(threads);
  }
  auto loaded = std::make_shared<DnnModel>(std::move(bytes), std::move(d), origin);
  loaded->probe(std::move(net));
  return loaded;
}

}  // namespace taconite::onnx
