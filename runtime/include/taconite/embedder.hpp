// taconite::IrEmbedder: load an AdaFace IR bundle once, turn aligned 112x112 faces into
// 512-d embeddings many times.
//
// Contract: an IrEmbedder is movable, not copyable, and NOT safe for concurrent calls: use one
// per thread, or share one behind a mutex or a single worker thread. On a moved-from IrEmbedder
// the embed calls return an Input error and the accessors return empty values. The library never prints
// (except TACONITE_TIMING=1 statistics on stderr at destruction), never aborts, never exits,
// and no exception escapes these calls.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "taconite/error.hpp"

namespace taconite {

// Backend names. `auto` picks an NPU backend when one is compiled in and its device opens,
// else the fast CPU backend, else cpu-reference.
inline constexpr std::string_view kBackendAuto = "auto";
inline constexpr std::string_view kBackendCpu = "cpu";
inline constexpr std::string_view kBackendCpuReference = "cpu-reference";
inline constexpr std::string_view kBackendNpuDirect = "npu-direct";
inline constexpr std::string_view kBackendNpuXrt = "npu-xrt";

// The backends this build of the library contains, in `auto` preference order.
TACONITE_API std::vector<std::string> compiled_backends();

// Names IrEmbedder::precision() returns: the numerics that actually run.
inline constexpr std::string_view kPrecisionF32 = "f32";    // cpu: f32 weights and activations
inline constexpr std::string_view kPrecisionBf16 = "bf16";  // cpu: bf16 weights and activations, f32 accumulation
// The replay (npu-direct, npu-xrt, cpu-reference, and cpu when it falls back to the replay): bf16
// tensors, each conv accumulated in f32 and rounded to bf16 as the NPU does (spec §4.1).
inline constexpr std::string_view kPrecisionBf16Exact = "bf16-exact";

enum class Precision {
  Auto,  // bf16 where the CPU computes it natively (AVX512-BF16 / AMX), f32 elsewhere (cpu backend)
  F32,   // force f32 compute (cpu backend)
};

// Thread counts (LoadOptions::threads, TACONITE_THREADS) above this are refused (an Input error)
// unless the machine has more hardware threads: max(hardware threads, kMaxThreads) is the limit.
inline constexpr int kMaxThreads = 256;

struct LoadOptions {
  std::string backend{kBackendAuto};
  // Worker threads for CPU work, 0..max(hardware threads, kMaxThreads); 0 = TACONITE_THREADS if
  // set (same range, 0 = all cores), else all cores. Out of range: load() returns an Input error.
  int threads = 0;
  Precision precision = Precision::Auto;
};

// Shape of the network's input step (channels is the padded stem width, e.g. 8).
struct InputDims {
  int channels = 0;
  int height = 0;
  int width = 0;
};

// A caller's face: channel-major f32, cvlface preprocessing ((x/255)-0.5)/0.5, planes in the bundle's
// param("input_channel_order") (RGB when absent; BGR for AdaFace's own checkpoints).
// data holds channels*height*width values; 1 <= channels <= input_dims().channels.
struct FaceChw {
  std::span<const float> data;
  int channels = 3;
  int height = 112;
  int width = 112;
};

using Embedding = std::vector<float>;  // raw (not L2-normalised) head output, embed_dim() values

class TACONITE_API IrEmbedder {
 public:
  struct Impl;  // private state (defined in the library)

  // Maps and validates every record of the bundle and prepares the backend. Errors: Io, Bundle
  // (names manifest.txt:<line> or tensors.txt:<line>), Device (backend unavailable or failed),
  // Input (a thread count out of range).
  static Result<IrEmbedder> load(const std::filesystem::path& bundle_dir, const LoadOptions& options = {});

  IrEmbedder(IrEmbedder&&) noexcept;
  IrEmbedder& operator=(IrEmbedder&&) noexcept;
  IrEmbedder(const IrEmbedder&) = delete;
  IrEmbedder& operator=(const IrEmbedder&) = delete;
  ~IrEmbedder();

  // One face -> one embedding. The face is rounded to bf16, zero-padded to the stem's channels
  // and tiled (spec §8). Errors: Input (wrong size or channel count), Device.
  Result<Embedding> embed(const FaceChw& face);

  // Several faces in one pass (the throughput path). Results equal embed() face by face up to
  // the backend's batching numerics. An empty batch gives an empty result.
  Result<std::vector<Embedding>> embed_batch(std::span<const FaceChw> faces);

  // Replays the bundle's recorded input (the input step's tensor, normally ref.input).
  Result<Embedding> embed_recorded();

  InputDims input_dims() const;
  int embed_dim() const;
  std::string model() const;            // the bundle's `param model`, or "" when absent
  int num_conv_dispatches() const;      // conv records in the manifest (NPU dispatches per face)
  std::string backend() const;          // the backend actually running, e.g. "cpu-reference"
  std::string backend_reason() const;   // why that backend was chosen (for `auto`), and its precision
  std::string precision() const;        // the numerics running: "f32", "bf16" or "bf16-exact" (kPrecision*)
  std::string param(std::string_view name) const;  // a `param` record's value, or "" when absent

  // An f32 reference tensor stored in the bundle (ref.input_chw, ref.npu_embedding,
  // ref.cpu_embedding); empty when the bundle has none of that name or it is not f32.
  std::vector<float> reference_f32(std::string_view name) const;

  // Non-fatal findings of the load (e.g. the stem zero-pattern check of spec §5.3).
  const std::vector<std::string>& diagnostics() const;

 private:
  explicit IrEmbedder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Cosine similarity in double precision; 0 when either vector is all zero or sizes differ.
TACONITE_API double cosine(std::span<const float> a, std::span<const float> b) noexcept;

}  // namespace taconite
