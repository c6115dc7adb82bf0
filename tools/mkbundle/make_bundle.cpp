#include "make_bundle.hpp"

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "bundle_emitter.hpp"
#include "face_image.hpp"
#include "network_file.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"
#include "tensor_file.hpp"

namespace taconite::mkbundle {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The target must be new, empty, or (with force) hold only a previous bundle's files.
void prepare_directory(const fs::path& dir, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw std::runtime_error(dir.string() + " exists and is not a directory");
    if (!fs::is_empty(dir, ec)) {
      if (!force)
        throw std::runtime_error(dir.string() + " is not empty (use --force to replace the bundle in it)");
      for (const char* name : {"manifest.txt", "tensors.txt", "tensors.bin", "kernels"}) fs::remove_all(dir / name, ec);
    }
  }
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
}

template <typename T>
T unwrap(Result<T> result, const std::string& what) {
  if (!result) throw std::runtime_error(what + ": " + result.error().message);
  return std::move(result).value();
}

// Replays the written bundle on the exact CPU device (what a test or imported bundle records as
// its "NPU" embedding), checks embed(face) against it and appends it as ref.npu_embedding.
void replay_and_record(const fs::path& out, const Tensor4& face, const std::vector<float>& cpu_embedding,
                       MakeReport& report) {
  const auto phase = Clock::now();
  std::vector<float> replay;
  {
    LoadOptions load;
    load.backend = std::string(kBackendCpuReference);
    IrEmbedder embedder = unwrap(IrEmbedder::load(out, load), "loading the written bundle");
    report.diagnostics = embedder.diagnostics();
    replay = unwrap(inspect::embed_recorded(embedder), "replaying the written bundle");
    const std::vector<float> chw(face.data.begin(), face.data.end());
    const Embedding api = unwrap(embedder.embed(FaceChw{chw, 3, face.h, face.w}), "embed() of ref.input_chw");
    report.cos_embed_api = cosine(api, replay);
    report.embed_api_bit_identical =
        api.size() == replay.size() && std::memcmp(api.data(), replay.data(), sizeof(float) * api.size()) == 0;
  }  // unmapped before tensors.bin grows
  report.seconds_replay = since(phase);
  {
    TensorFileWriter tensors(out, TensorFileWriter::Mode::Append);
    tensors.add_f32("ref.npu_embedding", {replay.size()}, replay);
    tensors.close();
    report.tensor_bytes = tensors.data_bytes();
  }
  {
    // Read the stored reference back through the runtime, as run_ir18 will.
    LoadOptions load;
    load.backend = std::string(kBackendCpuReference);
    IrEmbedder embedder = unwrap(IrEmbedder::load(out, load), "reloading the bundle");
    report.cos_recorder = cosine(replay, inspect::reference_f32(embedder, "ref.npu_embedding"));
  }
  report.cos_cpu_reference = cosine(replay, cpu_embedding);
}

void copy_summary(const EmitSummary& summary, MakeReport& report) {
  report.steps = summary.steps;
  report.conv_records = summary.conv_records;
  report.convs = summary.convs;
  report.contexts = summary.contexts;
}

}  // namespace

MakeReport make_bundle(const MakeOptions& options) {
  if (options.calib_batch < 1) throw std::runtime_error("--calib-batch must be at least 1");
  const auto start = Clock::now();
  prepare_directory(options.out, options.force);
  MakeReport report;
  report.model = model_param_name(options.model);

  // Network, calibration (spec §9), f32 ground truth.
  auto phase = Clock::now();
  IrNetwork net = make_network(options.model, {options.seed, options.gain});
  const Tensor4 batch = random_faces(options.calib_batch, net.input_height, net.input_width, options.seed ^ 0xCA1Bull);
  calibrate(net, batch, &report.calibration_trace);
  const Tensor4 face = random_faces(1, net.input_height, net.input_width, options.seed ^ 0xFACEull);
  const std::vector<float> cpu_embedding = embed_fp32(net, face, &report.reference_trace);
  report.seconds_calibrate = since(phase);

  phase = Clock::now();
  EmitOptions emit;
  emit.grouping = options.grouping;
  emit.params = {{"writer", "taconite-mkbundle"},
                 {"seed", std::to_string(options.seed)},
                 {"grouping", to_string(options.grouping)},
                 {"calib_batch", std::to_string(options.calib_batch)},
                 {"branch_gain", std::to_string(options.gain)}};
  emit.comment = "AdaFace " + net.name + " test bundle with synthetic calibrated weights, written by taconite-mkbundle";
  copy_summary(emit_bundle(net, face, cpu_embedding, options.out, emit), report);
  report.seconds_write = since(phase);
  replay_and_record(options.out, face, cpu_embedding, report);
  report.seconds_total = since(start);
  return report;
}

ImportReport import_bundle(const fs::path& network_dir, const fs::path& out, bool force) {
  const auto start = Clock::now();
  ExtractedNetwork x = read_network_file(network_dir);
  ImportReport report;
  report.model = x.net.name;
  auto phase = Clock::now();
  report.cos_extraction = cosine(embed_fp32(x.net, x.face, &report.reference_trace), x.cpu_embedding);
  report.seconds_calibrate = since(phase);
  if (!(report.cos_extraction >= kMinExtractionCosine))
    throw std::runtime_error("the extracted network does not reproduce the original graph's forward (cosine " +
                             std::to_string(report.cos_extraction) +
                             "): a layer was mapped wrongly; no bundle written");
  prepare_directory(out, force);
  phase = Clock::now();
  EmitOptions emit;
  emit.params = x.params;
  emit.comment = x.comment;
  copy_summary(emit_bundle(x.net, x.face, x.cpu_embedding, out, emit), report);
  report.seconds_write = since(phase);
  replay_and_record(out, x.face, x.cpu_embedding, report);
  report.seconds_total = since(start);
  return report;
}

}  // namespace taconite::mkbundle
