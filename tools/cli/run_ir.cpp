// run_ir18 / run_ir101: load a bundle, replay its recorded input `reps` times, and check the
// replay against the bundle's reference embeddings. One implementation, two names. An ONNX model
// (which records no input) embeds the caller's face only.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "face_input.hpp"
#include "run_report.hpp"
#include "taconite/inspect.hpp"
#include "taconite/taconite.hpp"

namespace {

using namespace taconite;

constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2, kExitMismatch = 3;

int report_error(const std::string& program, const Error& error) {
  std::fprintf(stderr, "%s: %s error: %s\n", program.c_str(), to_string(error.kind), error.message.c_str());
  return kExitError;
}

std::string network_name(const std::string& program) {
  return program.find("101") != std::string::npos ? "IR-101" : "IR-18";
}

std::optional<double> cosine_with(const IrEmbedder& engine, const char* name, const Embedding& embedding) {
  const std::vector<float> reference = inspect::reference_f32(engine, name);
  if (reference.empty()) return std::nullopt;
  return cosine(embedding, reference);
}

// The model's normalisation; --channel-order other than auto replaces its plane order.
Preprocessing image_preprocessing(const cli::CliOptions& options, const IrEmbedder& engine) {
  Preprocessing p = engine.shared_model()->preprocessing();
  if (options.channel_order != "auto")
    p.channel_order = options.channel_order == "bgr" ? PlaneOrder::Bgr : PlaneOrder::Rgb;
  return p;
}

int print_report(const cli::CliOptions& options, const cli::RunReport& report) {
  const std::string text = options.json ? cli::format_json(report) : cli::format_text(report);
  std::fputs(text.c_str(), stdout);
  if (options.json)  // the JSON object has a fixed shape; diagnostics go to stderr
    for (const std::string& line : report.diagnostics) std::fprintf(stderr, "%s: %s\n", options.program.c_str(), line.c_str());
  return report.matches() ? kExitOk : kExitMismatch;
}

// Runs `forward` reps times: the first is the cold latency, the rest give the warm mean.
template <typename Forward>
Result<Embedding> timed_reps(int reps, cli::RunReport& report, Forward&& forward) {
  std::optional<Result<Embedding>> last;
  double warm_total = 0.0;
  for (int rep = 0; rep < reps; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    last.emplace(forward());
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!last->ok()) return *last;
    if (rep == 0) report.cold_ms = ms;
    else warm_total += ms;
  }
  report.reps = reps;
  if (reps > 1) report.warm_ms = warm_total / (reps - 1);
  return std::move(*last);
}

int run(const cli::CliOptions& options) {
  LoadOptions load_options;
  load_options.backend = options.backend;
  load_options.threads = options.threads;
  load_options.model_proc = options.model_proc;
  Result<IrEmbedder> loaded = IrEmbedder::load(options.bundle_dir, load_options);
  if (!loaded) return report_error(options.program, loaded.error());
  IrEmbedder& engine = loaded.value();

  cli::RunReport report;
  report.model = engine.model().empty() ? network_name(options.program) : engine.model();
  report.backend = engine.backend();
  report.backend_reason = engine.backend_reason();
  report.precision = engine.precision();
  report.conv_dispatches = inspect::conv_dispatches(engine);
  report.embedding_dim = engine.embed_dim();
  report.diagnostics = engine.diagnostics();

  // The caller's face, when one is given, is what gets timed and written.
  std::optional<cli::OwnedFace> face;
  const InputDims dims = engine.input_dims();
  if (!options.image_path.empty() || !options.input_path.empty()) {
    auto read = options.image_path.empty()
                    ? cli::read_face_f32(options.input_path, dims.height, dims.width)
                    : cli::read_face_image(options.image_path, image_preprocessing(options, engine));
    if (!read) return report_error(options.program, read.error());
    face = std::move(read.value());
  }
  const bool onnx = engine.backend() == kBackendOpenCvDnn;
  if (onnx && !face)
    return report_error(options.program, {ErrorKind::Input, options.bundle_dir + ": an ONNX model records no input "
                                                            "to replay: give --image FILE or --input FILE.f32"});

  Result<Embedding> timed = face ? timed_reps(options.reps, report, [&] { return engine.embed(face->view()); })
                                 : timed_reps(options.reps, report, [&] { return inspect::embed_recorded(engine); });
  if (!timed) return report_error(options.program, timed.error());
  if (onnx) {  // no references to check against: the face's embedding is the result
    if (!options.output_path.empty())
      if (const std::optional<Error> error = cli::write_f32(options.output_path, timed.value()))
        return report_error(options.program, *error);
    return print_report(options, report);
  }

  // The self-checks always concern the bundle's recorded input.
  Result<Embedding> replay = face ? inspect::embed_recorded(engine) : std::move(timed.value());
  if (!replay) return report_error(options.program, replay.error());
  report.cos_recorder = cosine_with(engine, "ref.npu_embedding", replay.value());
  const bool cpu_backend = report.backend == "cpu" || report.backend == "cpu-reference";
  if (cpu_backend && report.cos_recorder && *report.cos_recorder < cli::kPackingThreshold)
    report.diagnostics.emplace_back(cli::kPackingMismatch);
  report.cos_cpu_reference = cosine_with(engine, "ref.cpu_embedding", replay.value());
  const std::vector<float> input_chw = inspect::reference_f32(engine, "ref.input_chw");
  if (!input_chw.empty()) {
    const int channels = static_cast<int>(input_chw.size() / (static_cast<std::size_t>(dims.height) * dims.width));
    Result<Embedding> via_api = engine.embed({input_chw, channels, dims.height, dims.width});
    if (!via_api) return report_error(options.program, via_api.error());
    report.cos_embed_api = cosine(via_api.value(), replay.value());
  }

  if (!options.output_path.empty()) {
    const Embedding& written = face ? timed.value() : replay.value();
    if (const std::optional<Error> error = cli::write_f32(options.output_path, written))
      return report_error(options.program, *error);
  }

  return print_report(options, report);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  const cli::ParsedCli parsed = cli::parse_cli(args, std::getenv("NREPS"));
  const std::string program = args.empty() ? "run_ir18" : std::filesystem::path(args[0]).filename().string();
  if (parsed.help) {
    std::fputs(cli::usage_text(program).c_str(), stdout);
    return kExitOk;
  }
  if (!parsed.options) {
    std::fprintf(stderr, "%s: %s\n%s", program.c_str(), parsed.usage_error.c_str(), cli::usage_text(program).c_str());
    return kExitUsage;
  }
  return run(*parsed.options);
}
