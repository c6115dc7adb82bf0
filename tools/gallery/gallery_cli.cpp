// taconite-gallery: create, fill, inspect, query and calibrate face galleries (gallery/). Faces are
// found and embedded as a pipeline's front end does (image_faces.hpp: dlib HOG + landmarks by
// default, YuNet with --detector, none for already aligned faces with --aligned).
// Exit codes: 0 ok, 1 error (one line on stderr), 2 usage.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "aligned_face_finder.hpp"
#include "calibrate_cli.hpp"
#include "calibration.hpp"
#include "displayed_location.hpp"
#include "events_cli.hpp"
#include "gallery_index.hpp"
#include "gallery_jsonl.hpp"
#include "gallery_store.hpp"
#include "identity_fields.hpp"
#include "hog_face_finder.hpp"
#include "image_faces.hpp"
#include "image_list.hpp"
#include "model_fingerprint.hpp"
#include "unknowns_cli.hpp"
#include "yunet_face_finder.hpp"

namespace {

using namespace taconite;
using gallery::GalleryStore;
namespace fs = std::filesystem;

constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2;
constexpr const char* kProgram = "taconite-gallery";
constexpr const char* kDefaultLandmarks = "/usr/share/dlib/shape_predictor_68_face_landmarks.dat";

constexpr const char* kUsage = R"(usage: taconite-gallery COMMAND GALLERY [options] [args]
GALLERY is an SQLite file, or a PostgreSQL database: postgresql://[user@]host[:port]/dbname,
  postgres://..., or a libpq key=value string (service=NAME, host=... dbname=...). A connection
  string holding a password is refused: put the password in a password file (PGPASSFILE, default
  ~/.pgpass) or a service file (PGSERVICEFILE).
  create GALLERY --model MODEL                a new, empty gallery for the model (MODEL: a bundle
                                              directory, or an ONNX file described by --model-proc)
  enroll GALLERY --model MODEL --name NAME [--face N | --largest] [--metadata JSON]
         [--detector YUNET.onnx | --aligned] IMAGE|DIR...
                                              add the face of each image (each image of a DIR);
                                              an image without a usable face (or unreadable) is
                                              skipped with one warning naming it; exit 0 when any
                                              face was enrolled (the skipped count printed), 1 when
                                              none could be
  list   GALLERY                              identities: id, name, templates, metadata
  remove GALLERY NAME                         remove an identity and its templates
  export GALLERY [FILE]                       JSON lines (stdout without FILE)
  import GALLERY FILE                         JSON lines of export (creates an SQLite GALLERY if
                                              missing; a PostgreSQL one must exist)
  match  GALLERY --model MODEL [--top-k K] [--face N | --largest] [--detector YUNET.onnx | --aligned] IMAGE
                                              the best K identities for the image's face
  calibrate GALLERY [--impostors DIR --model MODEL [--detector YUNET.onnx | --aligned]] [--fpir RATE] [--json]
         [--plot FILE.png]                    the match threshold for the gallery: its templates
                                              searched leave-one-out against the rest (at most
                                              10000 of them, an even sample beyond), and every face
                                              of DIR's photos (people not enrolled; without DIR the
                                              gallery's unknown faces, else each probe's best other
                                              identity) as impostors, scored as taconiteidentify
                                              does (best template per identity): the lowest
                                              threshold (4 decimals) naming at most RATE of the
                                              impostors (default 0.01), the share of genuine probes
                                              named right there (tpir) and the counts; --json: one
                                              JSON object; --plot: a PNG of both score histograms
  stats  GALLERY                              model, sizes, index kind
  copy   GALLERY DEST                         every identity and template into DEST (SQLite or
                                              PostgreSQL, created if missing, else empty and of
                                              the same model), ids kept; unknown faces kept for
                                              review are not copied; an SQLite DEST it created
                                              is removed again when the copy fails
  unknowns GALLERY [--threshold T] [--sheets DIR] [--json]
                                              clusters of the unknown faces taconiteidentify kept
                                              (keep-unknowns), largest first: id, size, cameras,
                                              first .. last seen (UTC), nearest identity, the key
                                              (ID:SIZE:DIGEST) name and forget take, and with
                                              --sheets a contact sheet DIR/cluster-ID.jpg (none
                                              written without); --json: one JSON object a line
  name   GALLERY KEY NAME [--threshold T] [--templates N]
                                              enrol the cluster's best N faces (default 5, at most
                                              100) as identity NAME (new or existing) and remove
                                              the cluster from the unknown faces
  forget GALLERY KEY [--threshold T]          delete the cluster's unknown faces
  forget GALLERY --older-than DAYS            delete every unknown face stored more than DAYS
                                              days ago (0: all), however many there are
  events GALLERY [--person NAME] [--camera C] [--kind new|update|end] [--uid UID] [--since T]
         [--until T] [--limit N] [--json]
                                              the track events taconite-run stored in the gallery,
                                              newest first (default at most 100, --limit 1..10000):
                                              time, camera, kind, person, state, dwell, track uid,
                                              snapshot; T: 7d, 12h, 30m, 45s back from now, or an
                                              ISO 8601 time (2026-12-01, 2026-12-01T08:00:00Z);
                                              --json: one JSON object a line
  (--threshold: the cosine similarity that links two faces of a cluster, in (0, 1]; default 0.5.
  KEY is the cluster's key as unknowns listed it: name and forget cluster again and act only
  when the cluster holds exactly the faces listed, else they refuse (list again).)
face finding (enroll, match, calibrate --impostors): by default dlib HOG + 68 landmarks (the stock
  front end); --detector YUNET.onnx finds faces and their 5 points with YuNet as taconitedetect does;
  --aligned takes each image as an already aligned face of the model's input size (112x112:
  taconitepublish's best faces), embedded without detection (other sizes are skipped)
options: --bundle DIR (the same as --model), --model-proc FILE (an ONNX model's description; default
  the model's path with .json), --backend NAME (auto), --threads N, --landmarks-model FILE (dlib 68-point predictor,
  default /usr/share/dlib/shape_predictor_68_face_landmarks.dat), --approximate-above N (templates
  beyond which an HNSW index serves search; default 1000000), --ef-search N (the HNSW query beam,
  1..65536; default 128)
exit codes: 0 ok, 1 error, 2 usage
)";

struct Options {
  std::string command, gallery, bundle, model_proc, name, metadata, backend = "auto", landmarks = kDefaultLandmarks;
  std::string detector;  // --detector: YuNet instead of dlib HOG
  std::optional<std::size_t> face;
  bool largest = false, aligned = false;
  gallery_cli::CalibrateOptions calibration;
  std::string calibrate_option;  // the last of --impostors, --fpir, --plot given
  int top_k = 5, threads = 0;
  std::size_t approximate_above = gallery::IndexOptions{}.approximate_above;
  int ef_search = gallery::IndexOptions{}.hnsw_ef_search;
  gallery_cli::ReviewOptions review;
  gallery_cli::ClusterKey cluster;         // name, forget
  std::optional<std::int64_t> older_than;  // forget --older-than DAYS
  std::vector<std::string> args;
};

struct UsageError {
  std::string message;
};

// A gallery as messages show it: never its password.
std::string shown(const std::string& location) { return gallery::displayed_location(location); }

int fail(const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", kProgram, message.c_str());
  return kExitError;
}
int fail(const Error& error) { return fail(error.message); }
void warn(const std::string& message) { std::fprintf(stderr, "%s: warning: %s\n", kProgram, message.c_str()); }
int done(const gallery::Status& s) { return s ? kExitOk : fail(s.error()); }

template <typename T>
bool parse_number(const std::string& text, T& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::optional<Options> parse(int argc, char** argv, std::string& usage_error) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) {
        usage_error = a + " needs a value";
        return std::nullopt;
      }
      return std::string(argv[++i]);
    };
    std::optional<std::string> v;
    if (a == "--largest")
      o.largest = true;
    else if (a == "--aligned")
      o.aligned = true;
    else if (a == "--detector" || a == "--impostors" || a == "--plot" || a == "--fpir") {
      if (!(v = value())) return std::nullopt;
      if (v->empty()) return usage_error = a + " takes a non-empty value", std::nullopt;
      if (a != "--detector") o.calibrate_option = a;
      if (a == "--detector")
        o.detector = *v;
      else if (a == "--impostors")
        o.calibration.impostors = *v;
      else if (a == "--plot")
        o.calibration.plot = *v;
      else if (!parse_number(*v, o.calibration.target_fpir) ||
               !(o.calibration.target_fpir >= 0.0 && o.calibration.target_fpir <= 1.0))
        return usage_error = "--fpir takes a rate in [0, 1]", std::nullopt;
    } else if (a == "--json")
      o.review.json = true;
    else if (a == "--threshold" || a == "--sheets" || a == "--templates" || a == "--older-than") {
      if (!(v = value())) return std::nullopt;
      if (a == "--sheets") {
        if (v->empty()) return usage_error = "--sheets takes a directory", std::nullopt;
        o.review.sheets = *v;
      } else if (a == "--older-than") {
        std::int64_t days = 0;
        if (!parse_number(*v, days) || days < 0 || days > gallery_cli::kMaxOlderThanDays)
          return usage_error = "--older-than takes whole days, 0.." + std::to_string(gallery_cli::kMaxOlderThanDays),
                 std::nullopt;
        o.older_than = days;
      } else if (a == "--threshold") {
        if (!parse_number(*v, o.review.threshold) || !(o.review.threshold > 0.0 && o.review.threshold <= 1.0))
          return usage_error = "--threshold takes a cosine similarity in (0, 1]", std::nullopt;
      } else if (!parse_number(*v, o.review.templates) || o.review.templates < 1 ||
                 o.review.templates > gallery_cli::kMaxNameTemplates) {
        return usage_error = "--templates takes 1.." + std::to_string(gallery_cli::kMaxNameTemplates), std::nullopt;
      }
    } else if (a == "--bundle" || a == "--model" || a == "--model-proc" || a == "--name" || a == "--metadata" ||
               a == "--backend" || a == "--landmarks-model" || a == "--face" || a == "--top-k" || a == "--threads" ||
               a == "--approximate-above" || a == "--ef-search") {
      if (!(v = value())) return std::nullopt;
      if (a == "--bundle" || a == "--model")
        o.bundle = *v;
      else if (a == "--model-proc")
        o.model_proc = *v;
      else if (a == "--name")
        o.name = *v;
      else if (a == "--metadata")
        o.metadata = *v;
      else if (a == "--backend")
        o.backend = *v;
      else if (a == "--landmarks-model")
        o.landmarks = *v;
      else if (a == "--face") {
        std::size_t n = 0;
        if (!parse_number(*v, n)) return usage_error = "--face takes a face number (0 = the largest)", std::nullopt;
        o.face = n;
      } else if (a == "--top-k") {
        if (!parse_number(*v, o.top_k) || o.top_k < 1 || o.top_k > gallery::kMaxTopK)
          return usage_error = "--top-k takes 1.." + std::to_string(gallery::kMaxTopK), std::nullopt;
      } else if (a == "--threads") {
        if (!parse_number(*v, o.threads) || o.threads < 0) return usage_error = "--threads takes a count", std::nullopt;
      } else if (a == "--ef-search") {
        if (!parse_number(*v, o.ef_search) || o.ef_search < 1 || o.ef_search > gallery::kMaxEfSearch)
          return usage_error = "--ef-search takes 1.." + std::to_string(gallery::kMaxEfSearch), std::nullopt;
      } else if (!parse_number(*v, o.approximate_above)) {
        return usage_error = "--approximate-above takes a template count", std::nullopt;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error = "unknown option " + a, std::nullopt;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() < 2) return usage_error = "a COMMAND and a GALLERY are needed", std::nullopt;
  o.command = positional[0];
  o.gallery = positional[1];
  o.args.assign(positional.begin() + 2, positional.end());
  static const std::map<std::string, std::pair<std::size_t, std::size_t>> arity = {
      {"create", {0, 0}}, {"enroll", {1, SIZE_MAX}}, {"list", {0, 0}},  {"remove", {1, 1}},
      {"export", {0, 1}}, {"import", {1, 1}},        {"match", {1, 1}}, {"stats", {0, 0}},
      {"copy", {1, 1}},   {"unknowns", {0, 0}},      {"name", {2, 2}},  {"forget", {0, 1}},
      {"calibrate", {0, 0}}};
  const auto it = arity.find(o.command);
  if (it == arity.end()) return usage_error = "unknown command " + o.command, std::nullopt;
  if (o.args.size() < it->second.first || o.args.size() > it->second.second)
    return usage_error = "wrong number of arguments for " + o.command, std::nullopt;
  if ((o.command == "create" || o.command == "enroll" || o.command == "match") && o.bundle.empty())
    return usage_error = o.command + " needs --model MODEL (a bundle directory or an ONNX file)", std::nullopt;
  if (o.command == "enroll" && o.name.empty()) return usage_error = "enroll needs --name NAME", std::nullopt;
  if (!o.detector.empty() && o.aligned) return usage_error = "--detector and --aligned exclude each other", std::nullopt;
  const bool finds_faces = o.command == "enroll" || o.command == "match" || o.command == "calibrate";
  if ((!o.detector.empty() || o.aligned) && !finds_faces)
    return usage_error = "--detector and --aligned are for enroll, match and calibrate", std::nullopt;
  const gallery_cli::CalibrateOptions& c = o.calibration;
  if (o.command != "calibrate" && !o.calibrate_option.empty())
    return usage_error = o.calibrate_option + " is calibrate's", std::nullopt;
  if (o.command == "calibrate" && c.impostors.empty() && (!o.bundle.empty() || !o.detector.empty() || o.aligned))
    return usage_error = "calibrate uses --model, --detector and --aligned only for --impostors photos", std::nullopt;
  if (o.command == "calibrate" && !c.impostors.empty() && o.bundle.empty())
    return usage_error = "calibrate --impostors needs --model MODEL to embed the photos", std::nullopt;
  if (o.face && o.largest) return usage_error = "--face and --largest exclude each other", std::nullopt;
  if (o.older_than && o.command != "forget") return usage_error = "--older-than is forget's", std::nullopt;
  if (o.command == "forget" && o.args.empty() == !o.older_than)
    return usage_error = "forget takes a cluster KEY or --older-than DAYS (one of them)", std::nullopt;
  if ((o.command == "name" || o.command == "forget") && !o.args.empty()) {
    const std::optional<gallery_cli::ClusterKey> key = gallery_cli::parse_cluster_key(o.args[0]);
    if (!key)
      return usage_error = o.command + " takes a cluster's key as taconite-gallery unknowns listed it (ID:SIZE:DIGEST)",
             std::nullopt;
    o.cluster = *key;
  }
  o.review.gallery = o.gallery;
  o.calibration.gallery = o.gallery;
  o.calibration.json = o.review.json;
  return o;
}

std::string box_text(const vision::FaceBox& b) {
  return std::to_string(b.width) + "x" + std::to_string(b.height) + " at " + std::to_string(b.x) + "," +
         std::to_string(b.y);
}

// Which face of an image to use: the only one, or the one the options name.
Result<std::size_t> choose_face(const std::string& path, const std::vector<vision::FaceBox>& faces, const Options& o) {
  if (faces.empty()) return Error{ErrorKind::Input, path + ": no face found"};
  if (o.largest) return std::size_t{0};
  if (o.face) {
    if (*o.face >= faces.size())
      return Error{ErrorKind::Input, path + ": --face " + std::to_string(*o.face) + " but only " +
                                         std::to_string(faces.size()) + " face(s) found"};
    return *o.face;
  }
  if (faces.size() == 1) return std::size_t{0};
  std::string list;
  for (std::size_t i = 0; i < faces.size() && i < 5; ++i)
    list += (i ? "; #" : "#") + std::to_string(i) + " " + box_text(faces[i]);
  return Error{ErrorKind::Input, path + ": " + std::to_string(faces.size()) + " faces found (" + list +
                                     "); choose one with --face N or --largest"};
}

// The model's engine, the gallery's model check and the face finder the options choose, shared by
// enroll, match and calibrate --impostors.
struct FrontEnd {
  IrEmbedder engine;
  std::unique_ptr<faces::FaceFinder> finder;
};

Result<std::unique_ptr<faces::FaceFinder>> load_finder(const Options& o, const IrEmbedder& engine) {
  const faces::ModelInput input = faces::model_input_of(engine);
  if (o.aligned) return std::unique_ptr<faces::FaceFinder>(std::make_unique<faces::AlignedFaceFinder>(input));
  if (!o.detector.empty()) {
    Result<std::unique_ptr<faces::YuNetFaceFinder>> yunet = faces::YuNetFaceFinder::load(o.detector, input);
    if (!yunet) return Error{yunet.error().kind, "--detector: " + yunet.error().message};
    return std::unique_ptr<faces::FaceFinder>(std::move(yunet.value()));
  }
  return faces::load_hog_face_finder(o.landmarks, input);
}

Result<FrontEnd> load_front_end(const Options& o, const GalleryStore& store) {
  Result<gallery::ModelFingerprint> fingerprint = gallery::fingerprint_model(o.bundle, o.model_proc);
  if (!fingerprint) return fingerprint.error();
  if (gallery::Status s = store.check_model(fingerprint.value()); !s) return s.error();
  LoadOptions load;
  load.backend = o.backend;
  load.threads = o.threads;
  load.model_proc = o.model_proc;
  Result<IrEmbedder> engine = IrEmbedder::load(o.bundle, load);
  if (!engine) return engine.error();
  Result<std::unique_ptr<faces::FaceFinder>> finder = load_finder(o, engine.value());
  if (!finder) return finder.error();
  return FrontEnd{std::move(engine.value()), std::move(finder.value())};
}

void progress(std::size_t done, std::size_t total, const std::string& what) {
  if (!isatty(STDERR_FILENO)) return;
  constexpr int kWidth = 30;
  const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu %-40.40s", std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(), done, total, what.c_str());
  if (done == total) std::fprintf(stderr, "\n");
}

int enroll(const Options& o) {
  // The name and metadata are checked before the model loads and any image is read.
  if (gallery::Status s = gallery::check_identity_name(o.name); !s) return fail("--name: " + s.error().message);
  if (Result<std::string> metadata = gallery::canonical_metadata(o.metadata); !metadata)
    return fail("--metadata: " + metadata.error().message);
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadWrite);
  if (!store) return fail(store.error());
  Result<FrontEnd> front = load_front_end(o, store.value());
  if (!front) return fail(front.error());
  faces::ImageFaces images(front.value().engine, *front.value().finder);

  // Every image named or found in a directory, in order.
  std::vector<std::string> files;
  for (const std::string& arg : o.args) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) {
      files.push_back(arg);
      continue;
    }
    Result<std::vector<fs::path>> listed = faces::directory_images(arg);
    if (!listed) return fail(listed.error());
    for (const fs::path& p : listed.value()) files.push_back(p.string());
  }
  if (files.empty()) return fail("no image to enroll for " + o.name + " (the directories hold none)");
  // An image that gives no usable face (none, several and none chosen, unreadable, too large) is
  // skipped with one warning naming it: one bad photo does not stop the person's others.
  std::vector<gallery::NewTemplate> templates;
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    progress(i, files.size(), fs::path(files[i]).filename().string());
    gallery::Status loaded = images.load(files[i]);
    Result<std::size_t> face = loaded ? choose_face(files[i], images.faces(), o) : Result<std::size_t>(loaded.error());
    Result<faces::ImageFace> embedded =
        face ? images.embed(face.value()) : Result<faces::ImageFace>(face.error());
    if (!embedded) {
      if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
      warn("skipped " + embedded.error().message);
      ++skipped;
      continue;
    }
    templates.push_back({std::move(embedded.value().embedding), embedded.value().norm, files[i], 0});
  }
  progress(files.size(), files.size(), "done");
  if (templates.empty())
    return fail("no face enrolled for " + o.name + ": every image was skipped (" + std::to_string(skipped) +
                " image(s); the warnings say why)");
  Result<GalleryStore::WriteBatch> batch = store.value().begin_write();
  if (!batch) return fail(batch.error());
  Result<gallery::Enrolled> enrolled = batch.value().enroll(o.name, o.metadata, templates);
  if (!enrolled) return fail(enrolled.error());
  if (gallery::Status s = batch.value().commit(); !s) return fail(s.error());
  const gallery::Enrolled& e = enrolled.value();
  std::string notes;
  if (e.duplicates) notes += ", " + std::to_string(e.duplicates) + " already enrolled (not added again)";
  if (skipped) notes += ", " + std::to_string(skipped) + " image(s) skipped";
  std::printf("enrolled %zu template(s) for %s (identity %lld)%s\n", e.added, o.name.c_str(),
              static_cast<long long>(e.identity), notes.c_str());
  return kExitOk;
}

int match(const Options& o) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return fail(store.error());
  Result<FrontEnd> front = load_front_end(o, store.value());
  if (!front) return fail(front.error());
  gallery::IndexOptions index_options;
  index_options.approximate_above = o.approximate_above;
  index_options.hnsw_ef_search = o.ef_search;
  std::string note;
  Result<gallery::GalleryIndex> index = gallery::GalleryIndex::load(store.value(), index_options, &note);
  if (!index) return fail(index.error());
  if (index.value().approximate_unsupported()) std::fprintf(stderr, "taconite-gallery: note: %s\n", note.c_str());
  faces::ImageFaces images(front.value().engine, *front.value().finder);
  if (gallery::Status s = images.load(o.args[0]); !s) return fail(s.error());
  Result<std::size_t> face = choose_face(o.args[0], images.faces(), o);
  if (!face) return fail(face.error());
  Result<faces::ImageFace> embedded = images.embed(face.value());
  if (!embedded) return fail(embedded.error());
  const std::vector<gallery::IdentityMatch> matches = index.value().search(embedded.value().embedding, o.top_k);
  if (matches.empty()) std::printf("no match: the gallery is empty\n");
  for (std::size_t i = 0; i < matches.size(); ++i)
    std::printf("%zu\t%s\t%.6f\tidentity=%lld template=%lld\n", i + 1, matches[i].name.c_str(),
                static_cast<double>(matches[i].similarity), static_cast<long long>(matches[i].identity_id),
                static_cast<long long>(matches[i].template_id));
  return kExitOk;
}

int create(const Options& o) {
  Result<gallery::ModelFingerprint> fingerprint = gallery::fingerprint_model(o.bundle, o.model_proc);
  if (!fingerprint) return fail(fingerprint.error());
  LoadOptions load;
  // Only the embedding size is needed: for a bundle the lightest load (an ONNX file has one backend).
  std::error_code ec;
  load.backend = fs::is_directory(o.bundle, ec) ? "cpu-reference" : "auto";
  load.model_proc = o.model_proc;
  Result<IrEmbedder> engine = IrEmbedder::load(o.bundle, load);
  if (!engine) return fail(engine.error());
  Result<GalleryStore> store = GalleryStore::create(o.gallery, fingerprint.value(), engine.value().embed_dim());
  if (!store) return fail(store.error());
  std::printf("created %s for %s (fingerprint %s, %d-d embeddings)\n", shown(o.gallery).c_str(),
              fingerprint.value().model.c_str(), fingerprint.value().sha256.c_str(), engine.value().embed_dim());
  return kExitOk;
}

int list(const Options& o) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return fail(store.error());
  Result<std::vector<gallery::IdentityRow>> rows = store.value().identities();
  if (!rows) return fail(rows.error());
  for (const gallery::IdentityRow& r : rows.value())
    std::printf("%lld\t%s\t%lld template(s)\t%s\n", static_cast<long long>(r.id), r.name.c_str(),
                static_cast<long long>(r.templates), r.metadata.c_str());
  return kExitOk;
}

int remove_identity(const Options& o) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadWrite);
  if (!store) return fail(store.error());
  Result<bool> removed = store.value().remove(o.args[0]);
  if (!removed) return fail(removed.error());
  if (!removed.value()) return fail(shown(o.gallery) + ": no identity named " + o.args[0]);
  std::printf("removed %s\n", o.args[0].c_str());
  return kExitOk;
}

int export_gallery(const Options& o) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return fail(store.error());
  if (o.args.empty()) {
    gallery::Status s = gallery_cli::export_jsonl(store.value(), std::cout, warn);
    return s ? kExitOk : fail(s.error());
  }
  std::ofstream out(o.args[0], std::ios::trunc);
  if (!out) return fail(o.args[0] + ": cannot be written");
  gallery::Status s = gallery_cli::export_jsonl(store.value(), out, warn);
  return s ? kExitOk : fail(o.args[0] + ": " + s.error().message);
}

int import_gallery(const Options& o) {
  Result<gallery_cli::ImportSummary> summary = gallery_cli::import_jsonl(o.gallery, o.args[0]);
  if (!summary) return fail(summary.error());
  const gallery_cli::ImportSummary& s = summary.value();
  std::printf("imported %lld template(s) of %lld identit%s into %s%s%s\n", static_cast<long long>(s.templates),
              static_cast<long long>(s.identities), s.identities == 1 ? "y" : "ies", shown(o.gallery).c_str(),
              s.created ? " (created)" : "",
              s.duplicates ? (", " + std::to_string(s.duplicates) + " already present (not added again)").c_str() : "");
  return kExitOk;
}

int calibrate(const Options& o) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return fail(store.error());
  std::optional<FrontEnd> front;
  std::optional<faces::ImageFaces> images;
  if (!o.calibration.impostors.empty()) {
    Result<FrontEnd> loaded = load_front_end(o, store.value());
    if (!loaded) return fail(loaded.error());
    front.emplace(std::move(loaded.value()));
    images.emplace(front->engine, *front->finder);
  }
  return done(gallery_cli::calibrate(o.calibration, store.value(), images ? &*images : nullptr, warn));
}

int stats(const Options& o) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return fail(store.error());
  Result<gallery::GalleryInfo> info = store.value().info();
  if (!info) return fail(info.error());
  const gallery::GalleryInfo& i = info.value();
  Result<std::size_t> unknowns = store.value().unknown_face_count();  // not read: any number is counted
  if (!unknowns) return fail(unknowns.error());
  const bool approximate = static_cast<std::size_t>(i.templates) > o.approximate_above;
  std::printf(
      "gallery %s\nschema version %d\nmodel %s\nmodel fingerprint %s\nembedding size %d\nidentities %lld\n"
      "templates %lld\nrevision %lld\nunknown faces %zu\n",
      shown(o.gallery).c_str(), i.schema_version, i.model.c_str(), i.model_fingerprint.c_str(), i.embedding_dim,
      static_cast<long long>(i.identities), static_cast<long long>(i.templates), static_cast<long long>(i.revision),
      unknowns.value());
  // A PostgreSQL gallery has no file of its own to size.
  if (!store.value().remote()) {
    std::error_code ec;
    const auto bytes = fs::file_size(o.gallery, ec);
    std::printf("file bytes %llu\n", static_cast<unsigned long long>(ec ? 0 : bytes));
  }
  const char* search = !approximate                            ? "exact (every template scanned)"
                       : gallery::approximate_search_available() ? "HNSW (approximate)"
                                                                 : "exact (above --approximate-above, but this "
                                                                   "taconite was built without FAISS: no HNSW)";
  std::printf("search %s\n", search);
  return kExitOk;
}

// The destination of copy: a new gallery of the source's model, or an existing empty one of it.
// `created`: create() was the one to make it (it refuses a location that exists), even when it
// then failed half-way (a full disk).
Result<GalleryStore> copy_destination(const std::string& location, const gallery::GalleryInfo& source, bool& created) {
  const gallery::ModelFingerprint model{source.model_fingerprint, source.model};
  Result<GalleryStore> made = GalleryStore::create(location, model, source.embedding_dim);
  created = made || made.error().kind != ErrorKind::Input;
  if (made) return made;
  if (made.error().kind != ErrorKind::Input) return made.error();  // unreachable, not a gallery, a full disk, ...
  Result<GalleryStore> existing = GalleryStore::open(location, GalleryStore::Access::ReadWrite);
  if (!existing) return existing.error();
  if (gallery::Status s = existing.value().check_model(model); !s) return s.error();
  Result<gallery::GalleryInfo> info = existing.value().info();
  if (!info) return info.error();
  if (info.value().identities > 0)
    return Error{ErrorKind::Input, shown(location) + ": already holds " + std::to_string(info.value().identities) +
                                       " identities; copy into a new or empty gallery (ids are kept)"};
  return existing;
}

// Copies; returns what it did. Both galleries are closed when it returns.
Result<std::string> copy_gallery(const Options& o, bool& created) {
  Result<GalleryStore> source = GalleryStore::open(o.gallery, GalleryStore::Access::ReadOnly);
  if (!source) return source.error();
  Result<GalleryStore::ReadSnapshot> snapshot = source.value().read_snapshot();
  if (!snapshot) return snapshot.error();
  Result<gallery::GalleryInfo> info = source.value().info();
  if (!info) return info.error();
  Result<std::vector<gallery::IdentityRow>> identities = source.value().identities();
  if (!identities) return identities.error();
  Result<std::vector<gallery::TemplateRow>> templates = source.value().templates(true);
  if (!templates) return templates.error();
  Result<GalleryStore> destination = copy_destination(o.args[0], info.value(), created);
  if (!destination) return destination.error();
  std::map<std::int64_t, std::vector<gallery::TemplateRow>> by_identity;
  for (gallery::TemplateRow& t : templates.value()) by_identity[t.identity_id].push_back(std::move(t));
  Result<GalleryStore::WriteBatch> batch = destination.value().begin_write();
  if (!batch) return batch.error();
  for (const gallery::IdentityRow& identity : identities.value())
    if (gallery::Status s = batch.value().copy_identity(identity, by_identity[identity.id]); !s) return s.error();
  if (gallery::Status s = batch.value().commit(); !s) return s.error();
  return "copied " + std::to_string(identities.value().size()) + " identit" +
         (identities.value().size() == 1 ? "y" : "ies") + " and " + std::to_string(templates.value().size()) +
         " template(s) from " + shown(o.gallery) + " to " + shown(o.args[0]);
}

int copy(const Options& o) {
  // The SQLite files a new destination consists of, and which of them are not there yet: a copy
  // that fails (a full disk) removes those it made, and nothing else. A PostgreSQL database is
  // not removed (an empty gallery initialised in it is a valid destination for the next copy).
  std::vector<fs::path> absent;
  if (!gallery::is_postgres_location(o.args[0]))
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      std::error_code ec;
      if (!fs::exists(fs::symlink_status(o.args[0] + suffix, ec))) absent.emplace_back(o.args[0] + suffix);
    }
  bool created = false;
  Result<std::string> copied = copy_gallery(o, created);
  if (copied) {
    std::printf("%s\n", copied.value().c_str());
    return kExitOk;
  }
  std::string removed;
  if (created)
    for (const fs::path& p : absent) {
      std::error_code ec;
      if (fs::remove(p, ec)) removed += (removed.empty() ? "" : ", ") + p.string();
    }
  return fail(copied.error().message + (removed.empty() ? "" : " (removed what the copy made: " + removed + ")"));
}

}  // namespace

int main(int argc, char** argv) {
  std::string usage_error;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    }
  // events has options of its own (events_cli.hpp).
  if (argc > 1 && std::string(argv[1]) == "events") try {
      return gallery_cli::events_command(argc, argv);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  const std::optional<Options> options = parse(argc, argv, usage_error);
  if (!options) {
    std::fprintf(stderr, "%s: usage error: %s (see --help)\n", kProgram, usage_error.c_str());
    return kExitUsage;
  }
  const std::string& c = options->command;
  try {
    if (c == "create") return create(*options);
    if (c == "enroll") return enroll(*options);
    if (c == "list") return list(*options);
    if (c == "remove") return remove_identity(*options);
    if (c == "export") return export_gallery(*options);
    if (c == "import") return import_gallery(*options);
    if (c == "match") return match(*options);
    if (c == "copy") return copy(*options);
    if (c == "calibrate") return calibrate(*options);
    if (c == "unknowns") return done(gallery_cli::list_unknowns(options->review));
    if (c == "name") return done(gallery_cli::name_cluster(options->review, options->cluster, options->args[1]));
    if (c == "forget")
      return done(options->older_than ? gallery_cli::forget_older_than(options->review, *options->older_than)
                                      : gallery_cli::forget_cluster(options->review, options->cluster));
    return stats(*options);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc, a filesystem error
    return fail(e.what());
  }
}
