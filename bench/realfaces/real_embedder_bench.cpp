// real-embedder-bench: one real ONNX embedder of ../shared/realfaces run by this runtime (its
// opencv-dnn backend, through the public Model/Session API), timed as bench/taconite_bench.cpp times a
// bundle, so that bench/run_cpu_bench.sh can put it beside ONNX Runtime (bench/ort_bench.mjs) on the
// same .onnx file and the same input. Two steps, each its own process (so the timed one's peak RSS
// holds the embedder alone, not YuNet):
//   real-embedder-bench face --realfaces DIR --yunet MODEL --scratch DIR --out-dir DIR
//       the first photo (sorted) in which YuNet finds a face, aligned as taconitedetect + taconiteadaface
//       align it and normalised as each embedder says: writes DIR/<label>.face.f32 (3x112x112 CHW)
//       and links DIR/<label>.onnx to the embedder's file (for the peers)
//   real-embedder-bench time --realfaces DIR --embedder LABEL --face FACE.f32 --scratch DIR --threads N
//       --ref-out REF.f32 BATCH...
//       load time, warm median latency (batch 1: Session::embed; larger: embed_batch), faces/s, process
//       CPU time, peak RSS: one JSON line in bench/report.py's schema; writes the batch-1 embedding
//       (the reference ONNX Runtime's output is compared with) to REF.f32
// BENCH_BUDGET_S: seconds per measurement (default 3). The models are linked into --scratch, never copied.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "../process_usage.hpp"
#include "image_file.hpp"
#include "photo_faces.hpp"
#include "real_embedders.hpp"
#include "yunet_face_finder.hpp"

namespace {

namespace fs = std::filesystem;
using namespace taconite::realfaces;
using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "real-embedder-bench: %s\n", message.c_str());
  std::exit(1);
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

using taconite::bench::cpu_seconds;
using taconite::bench::peak_rss_mib;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Args {
  std::string step;
  fs::path realfaces, yunet, scratch, out_dir, face, ref_out;
  std::string embedder;
  int threads = 2;
  std::vector<int> batches;
};

int bounded(const std::string& what, const char* text, int most) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end || v < 1 || v > most) fail(what + " takes 1.." + std::to_string(most) + ", not '" + text + "'");
  return static_cast<int>(v);
}

Args parse(int argc, char** argv) {
  if (argc < 2) fail("usage: real-embedder-bench face|time ... (see bench/realfaces/real_embedder_bench.cpp)");
  Args a;
  a.step = argv[1];
  if (a.step != "face" && a.step != "time") fail("the first argument is the step, face or time, not '" + a.step + "'");
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--", 0) != 0) {
      a.batches.push_back(bounded("a batch size", argv[i], 256));
      continue;
    }
    if (i + 1 >= argc) fail(flag + " needs a value");
    const char* value = argv[++i];
    if (flag == "--realfaces") a.realfaces = value;
    else if (flag == "--yunet") a.yunet = value;
    else if (flag == "--scratch") a.scratch = value;
    else if (flag == "--out-dir") a.out_dir = value;
    else if (flag == "--face") a.face = value;
    else if (flag == "--ref-out") a.ref_out = value;
    else if (flag == "--embedder") a.embedder = value;
    else if (flag == "--threads") a.threads = bounded(flag, value, 256);
    else fail("unknown flag " + flag);
  }
  if (a.realfaces.empty() || a.scratch.empty()) fail("--realfaces DIR and --scratch DIR are needed");
  if (a.step == "face" && (a.yunet.empty() || a.out_dir.empty())) fail("face needs --yunet MODEL and --out-dir DIR");
  if (a.step == "time" && (a.embedder.empty() || a.face.empty() || a.ref_out.empty() || a.batches.empty()))
    fail("time needs --embedder LABEL, --face FACE.f32, --ref-out REF.f32 and batch sizes");
  if (a.step == "time" && std::find(a.batches.begin(), a.batches.end(), 1) == a.batches.end())
    fail("time needs batch 1 among the batch sizes: its embedding is the reference written to --ref-out");
  return a;
}

void write_floats(const fs::path& path, std::span<const float> values) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size_bytes()));
  if (!out) fail(path.string() + ": cannot be written");
}

std::vector<float> read_floats(const fs::path& path, std::size_t count) {
  std::ifstream in(path, std::ios::binary);
  std::vector<float> values(count);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (!in || in.peek() != std::char_traits<char>::eof())
    fail(path.string() + ": not " + std::to_string(count) + " floats (a 3x112x112 face)");
  return values;
}

const RealEmbedder& embedder_named(const std::string& label) {
  for (const RealEmbedder& e : kRealEmbedders)
    if (label == e.label) return e;
  fail("no real embedder named '" + label + "' (foamliu-128, faceplugin-512)");
}

int write_faces(const Args& a) {
  auto listed = list_photos(a.realfaces / "photos");
  if (!listed) fail(listed.error().message);
  auto yunet = taconite::faces::YuNetFaceFinder::load(a.yunet.string(), {112, 112, {}}, a.threads);
  if (!yunet) fail(yunet.error().message);
  for (const Photo& photo : listed.value()) {
    auto bgr = taconite::faces::read_image((a.realfaces / "photos" / photo.relative).string());
    if (!bgr) fail(bgr.error().message);
    auto face = largest_aligned_face(*yunet.value(), bgr.value());
    if (!face) continue;
    fs::create_directories(a.out_dir);
    for (const RealEmbedder& e : kRealEmbedders) {
      auto model = load_real_embedder(e, a.realfaces, a.scratch, a.threads);
      if (!model) fail(model.error().message);
      write_floats(a.out_dir / (std::string(e.label) + ".face.f32"), model_input(face.value(), model.value()->preprocessing()));
      // <label>.onnx: a link to the model file, for the peers to run the very same file
      const fs::path link = a.out_dir / (std::string(e.label) + ".onnx");
      std::error_code ec;
      fs::remove(link, ec);
      fs::create_symlink(fs::absolute(a.realfaces / "models" / e.file), link, ec);
      if (ec) fail(link.string() + ": cannot link the model there (" + ec.message() + ")");
    }
    std::fprintf(stderr, "real-embedder-bench: the input face is %s\n", photo.relative.c_str());
    return 0;
  }
  fail("YuNet found no face in " + (a.realfaces / "photos").string());
}

int time_embedder(const Args& a) {
  const RealEmbedder& e = embedder_named(a.embedder);
  const std::vector<float> input = read_floats(a.face, 3 * 112 * 112);
  const auto load_start = Clock::now();
  const double load_cpu_start = cpu_seconds();
  auto model = load_real_embedder(e, a.realfaces, a.scratch, a.threads);
  if (!model) fail(model.error().message);
  auto session = taconite::Session::create(model.value());
  if (!session) fail(session.error().message);
  const double load_s = seconds_since(load_start), load_cpu_s = cpu_seconds() - load_cpu_start;
  const taconite::FaceChw face{input, 3, 112, 112};
  const double budget = std::getenv("BENCH_BUDGET_S") ? std::atof(std::getenv("BENCH_BUDGET_S")) : 3.0;

  std::string results;
  double rss_batch1 = 0.0;
  taconite::Embedding reference;  // the first batch-1 embedding
  for (const int batch : a.batches) {
    const std::vector<taconite::FaceChw> faces(static_cast<std::size_t>(batch), face);
    std::vector<double> times, cpu_times;
    const auto once = [&] {
      const auto start = Clock::now();
      const double cpu_start = cpu_seconds();
      if (batch == 1) {
        auto out = session.value().embed(face);
        times.push_back(seconds_since(start));
        cpu_times.push_back(cpu_seconds() - cpu_start);
        if (!out) fail(std::string(e.label) + ": " + out.error().message);
        if (reference.empty()) reference = std::move(out.value());
      } else {
        auto out = session.value().embed_batch(faces);
        times.push_back(seconds_since(start));
        cpu_times.push_back(cpu_seconds() - cpu_start);
        if (!out) fail(std::string(e.label) + ": " + out.error().message);
      }
    };
    once();  // the first call builds the batch size's network: excluded
    const double first = times.back();
    times.clear(), cpu_times.clear();
    const int reps = std::clamp(static_cast<int>(budget / std::max(first, 1e-4)), 2, 50);
    for (int i = 0; i < reps; ++i) once();
    const double t = median(times);
    char entry[200];
    std::snprintf(entry, sizeof entry,
                  "%s\"%d\": {\"median_ms\": %.2f, \"faces_per_s\": %.2f, \"cpu_ms\": %.2f, \"reps\": %d}",
                  results.empty() ? "" : ", ", batch, t * 1e3, batch / t, median(cpu_times) * 1e3, reps);
    results += entry;
    if (batch == 1) rss_batch1 = peak_rss_mib();
  }
  write_floats(a.ref_out, reference);
  std::error_code ec;
  const auto weight_bytes = fs::file_size(a.realfaces / "models" / e.file, ec);
  // A network that reshapes to a fixed batch of 1 runs embed_batch face by face (said in diagnostics).
  bool per_face_calls = false;
  for (const std::string& d : model.value()->diagnostics())
    per_face_calls = per_face_calls || d.find("one by one") != std::string::npos;
  std::printf("{\"model\": \"%s\", \"engine\": \"taconite %s\", \"backend\": \"%s\", \"precision\": \"%s\", "
              "\"threads\": %d, \"load_s\": %.3f, \"load_cpu_s\": %.3f, \"peak_rss_mib\": %.1f, "
              "\"rss_batch1_mib\": %.1f, \"weight_bytes\": %ju, \"per_face_calls\": %s, \"reference\": true, "
              "\"batches\": {%s}}\n",
              e.label, model.value()->backend().c_str(), model.value()->backend().c_str(),
              model.value()->precision().c_str(), a.threads, load_s, load_cpu_s, peak_rss_mib(), rss_batch1,
              static_cast<std::uintmax_t>(ec ? 0 : weight_bytes), per_face_calls ? "true" : "false", results.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  std::error_code ec;
  fs::create_directories(args.scratch, ec);
  if (ec) fail(args.scratch.string() + ": cannot be created (" + ec.message() + ")");
  return args.step == "face" ? write_faces(args) : time_embedder(args);
}
