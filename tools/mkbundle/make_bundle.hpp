// The whole job of taconite-mkbundle: build a seeded IR network, calibrate it, compute the f32
// ground truth, write the bundle, replay it on the cpu-reference backend and append the replay
// as ref.npu_embedding.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "fp32_forward.hpp"
#include "grouping.hpp"
#include "ir_network.hpp"

namespace taconite::mkbundle {

struct MakeOptions {
  ModelKind model = ModelKind::IrTiny;
  std::filesystem::path out;
  std::uint64_t seed = 1;
  Grouping grouping = Grouping::Tile;
  int calib_batch = 4;
  float gain = 0.2f;
  bool force = false;  // replace the bundle files of an existing directory
};

struct MakeReport {
  std::string model;  // the `param model` value
  int steps = 0, conv_records = 0, convs = 0, contexts = 0;
  std::uint64_t tensor_bytes = 0;
  double cos_recorder = 0.0;     // replay vs the stored ref.npu_embedding (re-read from the bundle)
  double cos_embed_api = 0.0;    // embed(ref.input_chw) vs replay
  bool embed_api_bit_identical = false;
  double cos_cpu_reference = 0.0;  // replay vs ref.cpu_embedding
  std::vector<std::string> diagnostics;  // the loader's (must be empty for our bundles)
  ActivationTrace calibration_trace, reference_trace;
  double seconds_calibrate = 0.0, seconds_write = 0.0, seconds_replay = 0.0, seconds_total = 0.0;
};

// Throws std::runtime_error with one clear line on any failure.
MakeReport make_bundle(const MakeOptions& options);

// taconite-import's second half: a bundle from an extracted trained network (network_file.hpp)
// instead of seeded weights. Before writing, the network's own f32 forward (fp32_forward.cpp) of
// the reference face must agree with the original graph's (cosine >= kMinExtractionCosine), so a
// mis-read graph never becomes a bundle. The summary's cos_cpu_reference is the replay against
// the original graph's embedding; cos_extraction the check above.
inline constexpr double kMinExtractionCosine = 0.9999;
struct ImportReport : MakeReport {
  double cos_extraction = 0.0;
};
ImportReport import_bundle(const std::filesystem::path& network_dir, const std::filesystem::path& out, bool force);

}  // namespace taconite::mkbundle
