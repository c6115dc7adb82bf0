// realfaces-bench: the real ONNX face embedders of ../shared/realfaces measured through the
// product's own front end (tools/faces, as taconite-gallery enroll finds faces; bench/realfaces/
// photo_faces.hpp), without GStreamer:
//   1. 1:1 verification on every pair of photos (same person = genuine; each impostor photo its own
//      person): AUC, EER, TAR at FAR 1e-2 and 1e-3 with their thresholds, score percentiles, and the
//      threshold recommended for the model (the one at FAR 1e-3);
//   2. the same with the faces aligned on YuNet's 5 points (`enroll --detector`, as taconitedetect)
//      and on dlib HOG + 68 -> 5 points (`enroll`'s default), with
//      how many photos each finds a face in (and both on the photos both find);
//   3. ms per face of each model at batch 1 and 8 beside an IR-18 bundle on the `cpu` backend, in
//      interleaved rounds of the same process (medians), on the same aligned faces.
// A table on stdout; with --json the same as one JSON object (the project's writer); with --plot the
// YuNet-aligned score histograms of both models as a PNG (tools/plot, as calibrate --plot). --scratch (default a temporary directory)
// holds the models' links and descriptions and is removed at the end.
//   realfaces-bench --realfaces DIR --yunet MODEL [--landmarks FILE] [--ir18 BUNDLE] [--threads N]
//                   [--rounds N] [--timing-faces N] [--json FILE] [--plot FILE.png] [--scratch DIR]
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "embedding_timing.hpp"
#include "hog_face_finder.hpp"
#include "image_file.hpp"
#include "json_write.hpp"
#include "photo_faces.hpp"
#include "real_embedders.hpp"
#include "score_plot.hpp"
#include "verification_scores.hpp"
#include "yunet_face_finder.hpp"

namespace {

namespace fs = std::filesystem;
using namespace taconite::realfaces;

struct Args {
  fs::path realfaces, yunet, landmarks = "/usr/share/dlib/shape_predictor_68_face_landmarks.dat", ir18, json, plot,
      scratch;
  int threads = 2;
  int rounds = 7;
  int timing_faces = 16;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "realfaces-bench: %s\n", message.c_str());
  std::exit(1);
}

int positive(const std::string& flag, const char* text, int most) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end || v < 1 || v > most) fail(flag + " takes 1.." + std::to_string(most) + ", not '" + text + "'");
  return static_cast<int>(v);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) fail(flag + " needs a value (usage: see bench/realfaces/realfaces_bench.cpp)");
    const char* value = argv[++i];
    if (flag == "--realfaces") a.realfaces = value;
    else if (flag == "--yunet") a.yunet = value;
    else if (flag == "--landmarks") a.landmarks = value;
    else if (flag == "--ir18") a.ir18 = value;
    else if (flag == "--json") a.json = value;
    else if (flag == "--plot") a.plot = value;
    else if (flag == "--scratch") a.scratch = value;
    else if (flag == "--threads") a.threads = positive(flag, value, 256);
    else if (flag == "--rounds") a.rounds = positive(flag, value, 1000);
    else if (flag == "--timing-faces") a.timing_faces = positive(flag, value, 1024) / 8 * 8;
    else fail("unknown flag " + flag);
  }
  if (a.realfaces.empty() || a.yunet.empty()) fail("--realfaces DIR and --yunet MODEL are needed");
  if (a.timing_faces < 8) fail("--timing-faces takes at least 8");
  return a;
}

// "AMD EPYC, avx2": the CPU's model name and the widest vector ISA it exposes.
std::string cpu_and_isa() {
  std::ifstream info("/proc/cpuinfo");
  std::string line, name = "unknown CPU", flags;
  while (std::getline(info, line)) {
    if (line.rfind("model name", 0) == 0 && name == "unknown CPU") name = line.substr(line.find(':') + 2);
    if (line.rfind("flags", 0) == 0 && flags.empty()) flags = line + " ";
  }
  const char* isa = flags.find(" avx512f ") != std::string::npos ? "avx512" :
                    flags.find(" avx2 ") != std::string::npos ? "avx2" : "no avx2";
  return name + ", " + isa;
}

// One front end's faces: the photos it found a face in, aligned to the 112x112 template.
struct FoundFaces {
  std::vector<std::size_t> photo;  // indexes into the photo list
  std::vector<cv::Mat> aligned;    // RGB, same order
};

// The photos both front ends found, as each aligned them.
FoundFaces common_part(const FoundFaces& mine, const FoundFaces& other) {
  const std::set<std::size_t> theirs(other.photo.begin(), other.photo.end());
  FoundFaces common;
  for (std::size_t i = 0; i < mine.photo.size(); ++i)
    if (theirs.count(mine.photo[i])) common.photo.push_back(mine.photo[i]), common.aligned.push_back(mine.aligned[i]);
  return common;
}

constexpr double kFars[] = {1e-2, 1e-3};
constexpr double kQuantiles[] = {0.0, 0.01, 0.05, 0.5, 0.95, 0.99, 0.999, 1.0};
constexpr const char* kQuantileNames[] = {"min", "p1", "p5", "p50", "p95", "p99", "p99.9", "max"};

struct Verification {
  std::string model, alignment;
  std::size_t photos = 0;
  PairScores scores;
  double auc = 0;
  EqualError eer;
  std::vector<Rates> at_fars;
};

Verification verify(const std::string& model, const std::string& alignment, taconite::Session& session,
                    const FoundFaces& faces, const std::vector<Photo>& photos) {
  auto embeddings = embed_faces(session, faces.aligned);
  if (!embeddings) fail(model + " (" + alignment + "): " + embeddings.error().message);
  std::vector<std::string> labels;
  for (std::size_t i : faces.photo) labels.push_back(photos[i].person);
  Verification v{model, alignment, faces.photo.size(), score_all_pairs(embeddings.value(), labels), 0, {}, {}};
  if (v.scores.genuine.empty() || v.scores.impostor.empty()) fail(model + " (" + alignment + "): no pairs of both kinds");
  v.auc = area_under_roc(v.scores);
  v.eer = equal_error(v.scores);
  for (double far : kFars) v.at_fars.push_back(at_far(v.scores, far));
  return v;
}

void print_verification(const Verification& v) {
  std::printf("| %s | %s | %zu | %zu | %zu | %.4f | %.4f (%.3f) |", v.model.c_str(), v.alignment.c_str(), v.photos,
              v.scores.genuine.size(), v.scores.impostor.size(), v.auc, v.eer.rate, v.eer.threshold);
  for (const Rates& r : v.at_fars) std::printf(" %.3f (%.3f) |", r.tar, r.threshold);
  std::printf("\n");
}

void print_quantiles(const Verification& v) {
  for (const auto* kind : {"genuine", "impostor"}) {
    const std::vector<double>& s = std::string(kind) == "genuine" ? v.scores.genuine : v.scores.impostor;
    std::printf("| %s | %s |", v.model.c_str(), kind);
    for (double q : kQuantiles) std::printf(" %.3f |", quantile(s, q));
    std::printf("\n");
  }
}

void add_double(JsonBuilder* b, const char* member, double value) {
  json_builder_set_member_name(b, member);
  json_builder_add_double_value(b, value);
}

void add_int(JsonBuilder* b, const char* member, std::size_t value) {
  json_builder_set_member_name(b, member);
  json_builder_add_int_value(b, static_cast<gint64>(value));
}

void add_string(JsonBuilder* b, const char* member, const std::string& value) {
  json_builder_set_member_name(b, member);
  json_builder_add_string_value(b, value.c_str());
}

void add_verification(JsonBuilder* b, const Verification& v) {
  json_builder_begin_object(b);
  add_string(b, "model", v.model);
  add_string(b, "alignment", v.alignment);
  add_int(b, "photos_with_face", v.photos);
  add_int(b, "genuine_pairs", v.scores.genuine.size());
  add_int(b, "impostor_pairs", v.scores.impostor.size());
  add_double(b, "auc", v.auc);
  add_double(b, "eer", v.eer.rate);
  add_double(b, "eer_threshold", v.eer.threshold);
  json_builder_set_member_name(b, "at_far");
  json_builder_begin_array(b);
  for (std::size_t i = 0; i < v.at_fars.size(); ++i) {
    json_builder_begin_object(b);
    add_double(b, "target_far", kFars[i]);
    add_double(b, "threshold", v.at_fars[i].threshold);
    add_double(b, "tar", v.at_fars[i].tar);
    add_double(b, "far", v.at_fars[i].far);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  for (const auto* kind : {"genuine", "impostor"}) {
    const std::vector<double>& s = std::string(kind) == "genuine" ? v.scores.genuine : v.scores.impostor;
    json_builder_set_member_name(b, (std::string(kind) + "_quantiles").c_str());
    json_builder_begin_object(b);
    for (std::size_t q = 0; q < std::size(kQuantiles); ++q) add_double(b, kQuantileNames[q], quantile(s, kQuantiles[q]));
    json_builder_end_object(b);
  }
  json_builder_end_object(b);
}

// The recommended threshold: the FAR 1e-3 threshold of the YuNet-aligned pairs, rounded up to 0.01
// (a round figure for a description file that still accepts at most that share of impostors).
Rates recommended(const Verification& yunet) {
  const double t = std::ceil(yunet.at_fars.back().threshold * 100.0) / 100.0;
  return rates_at(yunet.scores, t);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const std::string machine = cpu_and_isa();

  auto listed = list_photos(args.realfaces / "photos");
  if (!listed) fail(listed.error().message);
  const std::vector<Photo> photos = std::move(listed).value();
  std::set<std::string> persons;
  for (const Photo& p : photos) persons.insert(p.person);
  const std::size_t people = persons.size();

  // Every model here takes 112x112: one aligned face per photo and front end serves them all (each
  // model normalises it its own way, photo_faces' model_input).
  const taconite::faces::ModelInput input{112, 112, {}};
  // OpenCV's thread count is process-wide: YuNet's is the models' too.
  auto yunet = taconite::faces::YuNetFaceFinder::load(args.yunet.string(), input, args.threads);
  if (!yunet) fail(yunet.error().message);
  auto landmarks = taconite::vision::LandmarkModel::load(args.landmarks.string());
  if (!landmarks) fail(landmarks.error().message);
  taconite::faces::HogFaceFinder hog(std::move(landmarks.value()), input);

  FoundFaces by_yunet, by_dlib;
  std::vector<std::string> missed_yunet, missed_dlib;
  for (std::size_t i = 0; i < photos.size(); ++i) {
    auto bgr = taconite::faces::read_image((args.realfaces / "photos" / photos[i].relative).string());
    if (!bgr) fail(bgr.error().message);
    const std::tuple<taconite::faces::FaceFinder*, FoundFaces*, std::vector<std::string>*> finds[] = {
        {yunet.value().get(), &by_yunet, &missed_yunet}, {&hog, &by_dlib, &missed_dlib}};
    for (const auto& [finder, found, missed] : finds) {
      auto face = largest_aligned_face(*finder, bgr.value());
      if (face) found->photo.push_back(i), found->aligned.push_back(std::move(face).value());
      else missed->push_back(photos[i].relative + " (" + face.error().message + ")");
    }
  }
  std::printf("%s, %d threads; %zu photos of %zu people (impostors each their own)\n", machine.c_str(), args.threads,
              photos.size(), people);
  std::printf("faces found: YuNet %zu, dlib HOG %zu\n", by_yunet.photo.size(), by_dlib.photo.size());
  for (const std::string& p : missed_yunet) std::printf("  YuNet aligned no face in %s\n", p.c_str());
  for (const std::string& p : missed_dlib) std::printf("  dlib HOG aligned no face in %s\n", p.c_str());

  if (by_yunet.photo.empty()) fail("YuNet found no face in " + (args.realfaces / "photos").string());

  fs::path scratch = args.scratch;
  if (scratch.empty()) scratch = fs::temp_directory_path() / ("taconite-realfaces-bench-" + std::to_string(::getpid()));
  fs::create_directories(scratch);

  std::vector<Verification> verifications;
  std::vector<std::pair<std::string, Rates>> thresholds;
  std::vector<TimedModel> timed;
  for (const RealEmbedder& e : kRealEmbedders) {
    auto model = load_real_embedder(e, args.realfaces, scratch, args.threads);
    if (!model) fail(model.error().message);
    auto session = taconite::Session::create(model.value());
    if (!session) fail(std::string(e.label) + ": " + session.error().message);
    verifications.push_back(verify(e.label, "yunet", session.value(), by_yunet, photos));
    thresholds.emplace_back(e.label, recommended(verifications.back()));
    verifications.push_back(verify(e.label, "dlib", session.value(), by_dlib, photos));
    if (by_dlib.photo.size() != photos.size() || by_yunet.photo.size() != photos.size()) {
      verifications.push_back(verify(e.label, "yunet, photos both find", session.value(), common_part(by_yunet, by_dlib), photos));
      verifications.push_back(verify(e.label, "dlib, photos both find", session.value(), common_part(by_dlib, by_yunet), photos));
    }
    timed.push_back({e.label, model.value()});
  }
  fs::remove_all(scratch);
  if (!args.ir18.empty()) {
    taconite::LoadOptions options;
    options.backend = "cpu";
    options.threads = args.threads;
    auto ir18 = taconite::Model::load(args.ir18, options);
    if (!ir18) fail(ir18.error().message);
    timed.push_back({"ir18 (" + ir18.value()->precision() + ")", ir18.value()});
  }

  std::printf("\n| model | alignment | photos | genuine pairs | impostor pairs | AUC | EER (threshold) |");
  for (double far : kFars) std::printf(" TAR at FAR %g (threshold) |", far);
  std::printf("\n|---|---|---|---|---|---|---|---|---|\n");
  for (const Verification& v : verifications) print_verification(v);
  std::printf("\nYuNet-aligned cosine scores:\n| model | pairs |");
  for (const char* q : kQuantileNames) std::printf(" %s |", q);
  std::printf("\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Verification& v : verifications)
    if (v.alignment == "yunet") print_quantiles(v);
  std::printf("\nrecommended threshold (YuNet-aligned FAR 1e-3 threshold, rounded up to 0.01):\n");
  for (const auto& [label, r] : thresholds)
    std::printf("  %s: %.2f (TAR %.3f, FAR %.5f)\n", label.c_str(), r.threshold, r.tar, r.far);
  // The mistakes at that threshold, by photo: what a user would see go wrong.
  for (const Verification& v : verifications) {
    if (v.alignment != "yunet") continue;
    const double t = std::find_if(thresholds.begin(), thresholds.end(), [&](const auto& l) { return l.first == v.model; })
                         ->second.threshold;
    const auto name = [&](std::size_t at) { return photos[by_yunet.photo[at]].relative; };
    for (std::size_t k = 0; k < v.scores.genuine.size(); ++k)
      if (v.scores.genuine[k] < t)
        std::printf("  %s rejects %s ~ %s (%.3f)\n", v.model.c_str(), name(v.scores.genuine_pairs[k].first).c_str(),
                    name(v.scores.genuine_pairs[k].second).c_str(), v.scores.genuine[k]);
    for (std::size_t k = 0; k < v.scores.impostor.size(); ++k)
      if (v.scores.impostor[k] >= t)
        std::printf("  %s accepts %s ~ %s (%.3f)\n", v.model.c_str(), name(v.scores.impostor_pairs[k].first).c_str(),
                    name(v.scores.impostor_pairs[k].second).c_str(), v.scores.impostor[k]);
  }

  if (!args.plot.empty()) {
    taconite::plot::ScorePlot plot{"cosine similarity of the pair", "pairs", {}};
    for (const Verification& v : verifications)
      if (v.alignment == "yunet")
        for (const auto& [label, r] : thresholds)
          if (label == v.model) plot.panels.push_back({v.model + ", YuNet-aligned", v.scores.genuine, v.scores.impostor, r.threshold});
    if (auto written = taconite::plot::write_score_plot(args.plot.string(), plot); !written)
      fail("--plot " + written.error().message);
    std::printf("\nhistograms: %s\n", args.plot.c_str());
  }

  // The timed faces: the first YuNet-aligned ones, repeated if there are fewer.
  std::vector<cv::Mat> timing_faces;
  for (int i = 0; i < args.timing_faces; ++i) timing_faces.push_back(by_yunet.aligned[static_cast<std::size_t>(i) % by_yunet.aligned.size()]);
  auto timings = time_models(timed, timing_faces, args.rounds);
  if (!timings) fail(timings.error().message);
  std::printf("\nms per face, %d threads, median of %d interleaved rounds of %d faces:\n", args.threads, args.rounds,
              args.timing_faces);
  std::printf("| model | backend | batch | ms per face | CPU ms per face |\n|---|---|---|---|---|\n");
  for (const FaceTiming& t : timings.value())
    std::printf("| %s | %s | %d | %.1f | %.1f |\n", t.label.c_str(), t.backend.c_str(), t.batch, t.wall_ms, t.cpu_ms);

  if (!args.json.empty()) {
    JsonBuilder* b = json_builder_new();
    json_builder_begin_object(b);
    add_string(b, "machine", machine);
    add_int(b, "threads", static_cast<std::size_t>(args.threads));
    add_int(b, "photos", photos.size());
    add_int(b, "people", people);
    add_int(b, "yunet_faces", by_yunet.photo.size());
    add_int(b, "dlib_faces", by_dlib.photo.size());
    json_builder_set_member_name(b, "verification");
    json_builder_begin_array(b);
    for (const Verification& v : verifications) add_verification(b, v);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "recommended_thresholds");
    json_builder_begin_object(b);
    for (const auto& [label, r] : thresholds) {
      json_builder_set_member_name(b, label.c_str());
      json_builder_begin_object(b);
      add_double(b, "threshold", r.threshold);
      add_double(b, "tar", r.tar);
      add_double(b, "far", r.far);
      json_builder_end_object(b);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "timing");
    json_builder_begin_object(b);
    add_int(b, "rounds", static_cast<std::size_t>(args.rounds));
    add_int(b, "faces", static_cast<std::size_t>(args.timing_faces));
    json_builder_set_member_name(b, "results");
    json_builder_begin_array(b);
    for (const FaceTiming& t : timings.value()) {
      json_builder_begin_object(b);
      add_string(b, "model", t.label);
      add_string(b, "backend", t.backend);
      add_int(b, "batch", static_cast<std::size_t>(t.batch));
      add_double(b, "ms_per_face", t.wall_ms);
      add_double(b, "cpu_ms_per_face", t.cpu_ms);
      json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    json_builder_end_object(b);
    JsonNode* root = json_builder_get_root(b);
    std::ofstream(args.json, std::ios::binary | std::ios::trunc) << taconite::json::write_json(root) << "\n";
    json_node_unref(root);
    g_object_unref(b);
    std::printf("\nJSON: %s\n", args.json.c_str());
  }
  return 0;
}
