// taconite::Model and taconite::Session: load a face embedder once (the Model: an AdaFace IR bundle's
// mapped bundle, validated plan, backend-ready weights, open device; or an ONNX embedder and its
// description), then embed aligned faces from as many Sessions as there are threads (a Session: the
// per-call state: activations, staging, timing).
//
//   auto model = taconite::Model::load("bundles/ir18", {});      // once per process and model
//   auto session = taconite::Session::create(model.value());   // once per thread
//   auto embedding = session.value().embed(face);
//
// Contract of every call below: no exception escapes, the library never prints (except the opt-in
// timing statistics on stderr), never aborts, never exits. A call that can fail returns a Result.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "taconite/error.hpp"

namespace taconite {

// Backend names (LoadOptions::backend, Model::backend()). For a bundle, `auto` picks an NPU backend
// when one is compiled in and its device opens, else the fast CPU backend, else cpu-reference; for an
// ONNX file it picks opencv-dnn, the one backend that runs ONNX files (and only them).
inline constexpr std::string_view kBackendAuto = "auto";
inline constexpr std::string_view kBackendCpu = "cpu";
inline constexpr std::string_view kBackendCpuReference = "cpu-reference";
inline constexpr std::string_view kBackendNpuDirect = "npu-direct";
inline constexpr std::string_view kBackendNpuXrt = "npu-xrt";
inline constexpr std::string_view kBackendOpenCvDnn = "opencv-dnn";

// The backends this build of the library contains: the bundle backends in `auto` preference order,
// then opencv-dnn when built (with OpenCV's dnn module). Thread-safe; empty only when out of memory.
TACONITE_API std::vector<std::string> compiled_backends();

// Names Model::precision() returns: the numerics that actually run.
inline constexpr std::string_view kPrecisionF32 = "f32";    // cpu, opencv-dnn: f32 weights and activations
inline constexpr std::string_view kPrecisionBf16 = "bf16";  // cpu: bf16 weights and activations, f32 accumulation
// cpu: convs on int8 (weights per output channel, inputs per channel, scales calibrated at load on
// the bundle's recorded input and a noise image), everything else f32
inline constexpr std::string_view kPrecisionInt8 = "int8";
// The replay (npu-direct, npu-xrt, cpu-reference, and cpu when it falls back to the replay): bf16
// tensors, each conv accumulated in f32 and rounded to bf16 as the NPU does (spec §4.1).
inline constexpr std::string_view kPrecisionBf16Exact = "bf16-exact";

// The cpu backend's compute type (the replay backends always run bf16-exact). LoadOptions'
// Auto is the unset value: TACONITE_PRECISION (auto, f32, bf16 or int8) may set it.
enum class Precision {
  Auto,  // the fastest of f32, bf16 and f32 on Winograd 3x3 convs (its head reads bf16), timed at load
         // on the model's own network; f32 where the others cannot be built or are not more than 3 % faster
         // (backend_reason() says what was measured)
  F32,   // f32 compute (direct convolutions)
  Bf16,  // bf16 compute; load() returns a Device error where oneDNN has no bf16 kernels for this CPU
  Int8,  // int8 convs (kPrecisionInt8): faster, ~0.996-0.999 cosine to f32 on real faces, so never
         // Auto's pick; backend_reason() gives the cosine to f32 on the recorded input measured at load
};

// A precision's name as TACONITE_PRECISION, the tools and the element spell it ("auto", and the
// kPrecision* names), and back: nullopt for any other name.
inline constexpr std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::F32: return kPrecisionF32;
    case Precision::Bf16: return kPrecisionBf16;
    case Precision::Int8: return kPrecisionInt8;
    case Precision::Auto: break;
  }
  return "auto";
}
inline constexpr std::optional<Precision> precision_from_name(std::string_view name) {
  for (const Precision precision : {Precision::Auto, Precision::F32, Precision::Bf16, Precision::Int8})
    if (precision_name(precision) == name) return precision;
  return std::nullopt;
}

// Thread counts (LoadOptions::threads, TACONITE_THREADS) above this are refused (an Input error)
// unless the machine has more hardware threads: max(hardware threads, kMaxThreads) is the limit.
inline constexpr int kMaxThreads = 256;

namespace detail {
struct Access;  // the library's own access to Model and Session internals
}  // namespace detail

class NpuDriver;  // taconite/npu_driver.hpp: the amdxdna driver calls npu-direct makes
using NpuDriverFactory = std::function<std::shared_ptr<NpuDriver>()>;

// Everything a load is configured with. A zero / empty / unset field takes its documented default,
// which an environment variable may set (read once, by load(), nowhere else); out-of-range values,
// given here or in the environment, make load() return an error naming the value and the range.
struct LoadOptions {
  std::string backend{kBackendAuto};
  // CPU worker threads per call, 0..max(hardware threads, kMaxThreads); 0 = TACONITE_THREADS, else
  // all cores. A Session runs its calls with this many threads. opencv-dnn: OpenCV's thread count,
  // which is process-wide (cv::setNumThreads at load: the last ONNX load's count applies).
  int threads = 0;
  // The description of an ONNX model (docs/models.md); empty = the model's path with .json for
  // .onnx (mobilefacenet.onnx -> mobilefacenet.json). A bundle's load refuses a non-empty one.
  std::filesystem::path model_proc;
  Precision precision = Precision::Auto;
  // NPU device node npu-direct opens; "" = TACONITE_NPU_DEVICE, else /dev/accel/accel0.
  std::string npu_device;
  // Per-dispatch wait budget of the NPU backends, 0..3600000 ms; 0 = TACONITE_NPU_TIMEOUT_MS, else 10000.
  std::chrono::milliseconds npu_timeout{0};
  // Resident NPU hardware contexts, 0..255; 0 = TACONITE_CTX_CACHE, else 16 (the NPU2 cap).
  int context_cache = 0;
  // One statistics line per model (and per NPU device) on stderr at destruction; unset = TACONITE_TIMING=1.
  std::optional<bool> timing;
  // The driver npu-direct calls (tests inject a simulated device); empty = the real driver (libc).
  NpuDriverFactory npu_driver;
};

// Shape of the network's input: channels is the colour channels a face carries (3, RGB), height
// and width its size (112x112 for AdaFace).
struct InputDims {
  int channels = 0;
  int height = 0;
  int width = 0;
};

// The order of the colour planes a model is fed (a description's channel_order).
enum class PlaneOrder { Rgb, Bgr };

// How a caller turns 8-bit pixels into the model's input (Model::preprocessing()): the aligned face
// resized to width x height, planes in channel_order, and plane c's value (pixel/255 - mean[c]) /
// std_dev[c]. A bundle: its size, its param input_channel_order (RGB when absent), mean and std_dev
// 0.5 (cvlface); an ONNX model: its description's input.
struct Preprocessing {
  int width = 0;
  int height = 0;
  PlaneOrder channel_order = PlaneOrder::Rgb;
  std::array<float, 3> mean{};     // per fed plane, in channel_order
  std::array<float, 3> std_dev{};  // per fed plane, never 0
};

// A caller's face: channel-major f32, normalised as Model::preprocessing() says.
// data holds channels*height*width values; channels is normally input_dims().channels (3); for a
// bundle the runtime zero-pads to the stem's width, and also accepts 1..that width (padding
// included); an ONNX model takes exactly 3.
struct FaceChw {
  std::span<const float> data;
  int channels = 3;
  int height = 112;
  int width = 112;
};

using Embedding = std::vector<float>;  // raw (not L2-normalised) head output, embed_dim() values

// The loaded model: immutable after load() and safe to share between threads (every call is
// const and thread-safe). Sessions keep it alive; it is destroyed with its last holder.
class TACONITE_API Model {
 public:
  struct Impl;  // private state (defined in the library)

  // `path` is a bundle directory or an ONNX file (a path ending in .onnx, any case).
  // A bundle: maps and validates every record and prepares the backend (weights in the layout it
  // runs, NPU device opened); the whole bundle is read once, seconds for IR-101. An ONNX file: reads
  // it and its description (LoadOptions::model_proc), parses it with OpenCV DNN, checks the
  // declared and the computed shapes against the description and runs one probe forward.
  // Errors: Io (a file missing or unreadable, named), Bundle (names manifest.txt:<line> or
  // tensors.txt:<line>; for ONNX the model file or the description and the field), Device (backend
  // unavailable or failed), Input (an option out of range, or a backend that cannot run this kind
  // of model).
  static Result<std::shared_ptr<const Model>> load(const std::filesystem::path& path,
                                                   const LoadOptions& options = {});

  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model();

  InputDims input_dims() const;        // (3, 112, 112) for AdaFace
  int embed_dim() const;               // embedding length (512 for AdaFace)
  std::string name() const;            // the bundle's `param model` ("" when absent), or the description's name
  Preprocessing preprocessing() const;  // how to normalise a face for this model
  // The model's recommended cosine match threshold: the description's `threshold`; none for a bundle
  // or a description without one.
  std::optional<double> recommended_threshold() const;
  // The same without loading the model (no network is read or run): for an ONNX file its
  // description's `threshold` (`model_proc`, empty = beside the model; read and checked as load()
  // reads it), none for a bundle (not read) or a description without one. Errors: Io (the
  // description unreadable, named), Bundle (malformed, naming the file and the field), Device (a
  // build without the opencv-dnn backend).
  static Result<std::optional<double>> read_recommended_threshold(const std::filesystem::path& path,
                                                                  const std::filesystem::path& model_proc = {});
  std::string backend() const;         // the backend actually running, e.g. "cpu-reference"
  std::string backend_reason() const;  // why that backend was chosen (for `auto`), and its precision
  std::string precision() const;       // the numerics running: "f32", "bf16", "int8" or "bf16-exact" (kPrecision*)
  // Non-fatal findings of the load (e.g. the stem zero-pattern check of spec §5.3, or the cpu
  // backend running the exact replay). Valid as long as the model.
  const std::vector<std::string>& diagnostics() const;


 private:
  friend struct detail::Access;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Per-thread state for embedding with one model: cheap to create (no weight copies; scratch and
// activations only, built on first use). Movable, not copyable, NOT safe for concurrent calls:
// one per thread. Sessions of one model run concurrently on the CPU backends; on the NPU backends
// their calls take turns on the device's one queue. A moved-from Session's embed calls return an
// Input error.
class TACONITE_API Session {
 public:
  struct Impl;  // private state (defined in the library)

  // A new session of `model` (which it keeps alive). Cost: the per-call buffers (for the replay
  // backends the activations of one face; for cpu its batch-1 network). Errors: Input (null
  // model), Device (out of memory, oneDNN failure).
  static Result<Session> create(std::shared_ptr<const Model> model);

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  // One face -> one embedding. A bundle's: the face is rounded to bf16, zero-padded to the stem's
  // channels and tiled (spec §8). Errors: Input (wrong size or channel count; for ONNX a value that
  // is not finite), Device (for ONNX also an output that is not finite, naming the model file).
  Result<Embedding> embed(const FaceChw& face);

  // Several faces in one pass (the throughput path). Results equal embed() face by face up to
  // the backend's batching numerics (opencv-dnn: one blob of N faces when the load's probe found
  // the network batches, else face by face; Model::diagnostics() says so). An empty batch gives an
  // empty result. Errors: as embed().
  Result<std::vector<Embedding>> embed_batch(std::span<const FaceChw> faces);

  // The model this session embeds with; nullptr for a moved-from session.
  const std::shared_ptr<const Model>& model() const noexcept;


 private:
  friend struct detail::Access;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Cosine similarity in double precision; 0 when either vector is all zero or sizes differ.
// Thread-safe, no allocation.
TACONITE_API double cosine(std::span<const float> a, std::span<const float> b) noexcept;

}  // namespace taconite
