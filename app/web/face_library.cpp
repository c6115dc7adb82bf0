#include "face_library.hpp"

#include <glib.h>

#include <algorithm>
#include <atomic>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <set>
#include <utility>

#include "unknown_review.hpp"
#include "gallery_store.hpp"
#include "identity_fields.hpp"
#include "face_finder.hpp"
#include "model_fingerprint.hpp"
#include "pixel_normalisation.hpp"
#include "taconite/model.hpp"
#include "template_thumbnails.hpp"
#include "unix_time.hpp"
#include "unknown_clusters.hpp"
#include "uploaded_image.hpp"
#include "yunet_face_finder.hpp"

namespace taconite::app {

namespace {

using gallery::GalleryStore;

constexpr double kDefaultMatchThreshold = 0.4;  // taconiteidentify's default
constexpr int kThumbnailJpegQuality = 90;

// 400 for a caller's mistake (Input), 500 for the server's (Io, ...).
ApiReply failure(const Error& e) { return error_reply(e.kind == ErrorKind::Input ? 400 : 500, e.message); }

std::vector<unsigned char> jpeg_of_rgb(const cv::Mat& rgb) {
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<unsigned char> jpeg;
  cv::imencode(".jpg", bgr, jpeg, {cv::IMWRITE_JPEG_QUALITY, kThumbnailJpegQuality});
  return jpeg;
}

}  // namespace

// One engine and detector, used by one call at a time.
struct FaceLibrary::Engine {
  Session embedder;  // a session on the shared model: one engine per concurrent call
  std::unique_ptr<faces::YuNetFaceFinder> finder;
  std::vector<float> chw;

  // The faces of `bgr` (largest first, at most `max_faces`), each embedded; the aligned crop as JPEG
  // when `crops`.
  struct Face {
    vision::FaceBox box;
    std::vector<float> embedding;
    std::vector<unsigned char> crop_jpeg;
  };
  Result<std::vector<Face>> faces_of(const cv::Mat& bgr, std::size_t max_faces, bool crops) {
    Result<std::vector<vision::FaceBox>> boxes = finder->find(bgr);
    if (!boxes) return boxes.error();
    std::vector<Face> out;
    const InputDims dims = embedder.model()->input_dims();
    for (std::size_t i = 0; i < boxes.value().size() && i < max_faces; ++i) {
      if (gallery::Status s = finder->model_input(i, chw); !s) continue;  // no alignment: not embedded
      Result<Embedding> e = embedder.embed({chw, 3, dims.height, dims.width});
      if (!e) return e.error();
      Face f{boxes.value()[i], std::move(e.value()), {}};
      if (crops)
        if (Result<cv::Mat> aligned = finder->aligned_face(i)) f.crop_jpeg = jpeg_of_rgb(aligned.value());
      out.push_back(std::move(f));
    }
    return out;
  }
};

class FaceLibrary::BorrowedEngine {
 public:
  BorrowedEngine(FaceLibrary& owner, std::unique_ptr<Engine> engine) : owner_(owner), engine_(std::move(engine)) {}
  BorrowedEngine(BorrowedEngine&&) = default;
  ~BorrowedEngine() {
    if (!engine_) return;
    std::lock_guard lock(owner_.engines_mutex_);
    owner_.free_engines_.push_back(std::move(engine_));
  }
  Engine* get() const { return engine_.get(); }

 private:
  FaceLibrary& owner_;
  std::unique_ptr<Engine> engine_;
};

FaceLibrary::~FaceLibrary() = default;

FaceLibrary::BorrowedEngine FaceLibrary::borrow() {
  std::lock_guard lock(engines_mutex_);
  if (free_engines_.empty()) return BorrowedEngine(*this, nullptr);
  std::unique_ptr<Engine> e = std::move(free_engines_.back());
  free_engines_.pop_back();
  return BorrowedEngine(*this, std::move(e));
}

Result<std::unique_ptr<FaceLibrary>> FaceLibrary::load(const WebServerOptions& options) {
  std::unique_ptr<FaceLibrary> lib(new FaceLibrary());
  lib->options_ = options;
  if (options.detector.empty()) return Error{ErrorKind::Input, "web: a face detector (YuNet .onnx) is required"};
  const std::size_t engines = options.bounds.max_concurrent_recognitions;
  if (engines < 1 || engines > 64)
    return Error{ErrorKind::Input, "web: max concurrent recognitions must be 1..64, not " + std::to_string(engines)};
  Result<GalleryStore> store = GalleryStore::open(options.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return store.error();
  Result<gallery::ModelFingerprint> fingerprint = gallery::fingerprint_model(options.model, options.model_proc);
  if (!fingerprint) return fingerprint.error();
  if (gallery::Status s = store.value().check_model(fingerprint.value()); !s) return s.error();
  std::shared_ptr<const Model> model = options.shared_model;
  if (!model) {
    LoadOptions load;
    load.backend = options.backend;
    load.threads = options.threads;
    load.model_proc = options.model_proc;
    Result<std::shared_ptr<const Model>> loaded = Model::load(options.model, load);
    if (!loaded) return loaded.error();
    model = std::move(loaded.value());
  }
  const InputDims dims = model->input_dims();
  const faces::ModelInput input{dims.width, dims.height, vision::normalisation_of(model->preprocessing())};
  lib->threshold_ = options.match_threshold.value_or(model->recommended_threshold().value_or(kDefaultMatchThreshold));
  for (std::size_t i = 0; i < engines; ++i) {
    Result<Session> session = Session::create(model);
    if (!session) return session.error();
    Result<std::unique_ptr<faces::YuNetFaceFinder>> finder =
        faces::YuNetFaceFinder::load(options.detector, input, options.threads);
    if (!finder) return Error{finder.error().kind, options.detector + ": " + finder.error().message};
    lib->free_engines_.push_back(
        std::make_unique<Engine>(Engine{std::move(session.value()), std::move(finder.value()), {}}));
  }
  return lib;
}

Result<std::shared_ptr<const gallery::GalleryIndex>> FaceLibrary::current_index() {
  Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return store.error();
  Result<std::int64_t> revision = store.value().revision();
  if (!revision) return revision.error();
  std::lock_guard lock(index_mutex_);
  if (index_ && index_->revision() == revision.value()) return index_;
  gallery::IndexOptions o;
  o.persist = false;  // the page never builds a persisted HNSW file beside the pipelines' gallery
  Result<gallery::GalleryIndex> index = gallery::GalleryIndex::load(store.value(), o);
  if (!index) return index.error();
  index_ = std::make_shared<const gallery::GalleryIndex>(std::move(index.value()));
  return index_;
}

ApiReply FaceLibrary::people() {
  Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return failure(store.error());
  Result<GalleryStore::ReadSnapshot> snapshot = store.value().read_snapshot();
  if (!snapshot) return failure(snapshot.error());
  Result<std::vector<gallery::IdentityRow>> ids = store.value().identities();
  if (!ids) return failure(ids.error());
  Result<std::vector<gallery::TemplateRow>> templates = store.value().templates(false);
  if (!templates) return failure(templates.error());
  std::vector<std::int64_t> template_ids;
  for (const gallery::TemplateRow& t : templates.value()) template_ids.push_back(t.id);
  Result<gallery::TemplateThumbnails> thumbs = gallery::TemplateThumbnails::open(options_.gallery, false);
  if (!thumbs) return failure(thumbs.error());
  Result<std::vector<bool>> has = thumbs.value().has(template_ids);
  if (!has) return failure(has.error());
  JsonText j;
  j.array();
  for (const gallery::IdentityRow& person : ids.value()) {
    j.object().name("id").value(person.id).name("name").value(person.name);
    j.name("template_count").value(person.templates).name("created_unix").value(person.created_unix);
    j.name("templates").array();
    for (std::size_t i = 0; i < templates.value().size(); ++i) {
      const gallery::TemplateRow& t = templates.value()[i];
      if (t.identity_id != person.id) continue;
      j.object().name("id").value(t.id).name("source").value(t.source).name("created_unix").value(t.created_unix);
      j.name("thumbnail");
      if (has.value()[i])
        j.value("/api/templates/" + std::to_string(t.id) + "/thumbnail.jpg");
      else
        j.null();
      j.end_object();
    }
    j.end_array().end_object();
  }
  j.end_array();
  return {200, "application/json", j.text()};
}

ApiReply FaceLibrary::template_thumbnail(std::int64_t template_id) {
  Result<gallery::TemplateThumbnails> thumbs = gallery::TemplateThumbnails::open(options_.gallery, false);
  if (!thumbs) return failure(thumbs.error());
  const std::int64_t ids[] = {template_id};
  Result<std::vector<std::vector<unsigned char>>> got = thumbs.value().get(ids);
  if (!got) return failure(got.error());
  if (got.value()[0].empty()) return error_reply(404, "template " + std::to_string(template_id) + " has no thumbnail");
  return bytes_reply(std::move(got.value()[0]), "image/jpeg");
}

namespace {

// A template's face crop: the template's source (as enrolled) and its JPEG.
struct TemplateCrop {
  std::string source;
  std::vector<unsigned char> jpeg;
};

// Keeps the crops as the thumbnails of `identity`'s templates enrolled from those sources. After the
// commit: a failure here costs a picture, never a template.
void keep_thumbnails(const std::string& gallery_location, const GalleryStore& store, std::int64_t identity,
                     const std::vector<TemplateCrop>& crops) {
  if (crops.empty()) return;
  Result<std::vector<gallery::TemplateRow>> rows = store.templates(false);
  Result<gallery::TemplateThumbnails> thumbs = gallery::TemplateThumbnails::open(gallery_location, true);
  if (!rows || !thumbs) return;
  for (const gallery::TemplateRow& r : rows.value())
    if (r.identity_id == identity)
      for (const TemplateCrop& crop : crops)
        if (r.source == gallery::printable_source(crop.source) && !crop.jpeg.empty())
          (void)thumbs.value().put(r.id, crop.jpeg);
}

}  // namespace

ApiReply FaceLibrary::add_photos(const std::string& name, std::span<const UploadedFile> files, std::size_t dropped) {
  if (gallery::Status s = gallery::check_identity_name(name); !s) return failure(s.error());
  if (files.empty()) return error_reply(400, "no image was uploaded");
  BorrowedEngine engine = borrow();
  if (!engine.get()) return error_reply(503, "every engine is busy; try again");
  struct Found {
    std::string source;
    gallery::NewTemplate t;
    std::vector<unsigned char> crop;
  };
  std::vector<Found> found;
  static std::atomic<std::uint64_t> uploads{0};
  const std::uint64_t upload = gallery::now_unix() * 1000 + (uploads++ % 1000);
  JsonText report;
  report.object().name("files").array();
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string what = "file " + std::to_string(i + 1) + " (" + gallery::printable_source(files[i].name) + ")";
    report.object().name("file").value(gallery::printable_source(files[i].name));
    Result<cv::Mat> image = decode_uploaded_image(files[i].bytes, options_.bounds.max_image_pixels, what);
    Result<std::vector<Engine::Face>> faces =
        image ? engine.get()->faces_of(image.value(), 1, true) : Result<std::vector<Engine::Face>>(image.error());
    if (!faces) {
      report.name("error").value(faces.error().message).end_object();
      continue;
    }
    if (faces.value().empty()) {
      report.name("error").value(what + ": no face found").end_object();
      continue;
    }
    // The source names the upload and its place in it, so the new template's id can be found.
    Found f;
    f.source = "web upload " + std::to_string(upload) + "#" + std::to_string(i + 1) + ": " +
               gallery::printable_source(files[i].name);
    f.t = {std::move(faces.value()[0].embedding), 0.0, f.source, 0};
    f.crop = std::move(faces.value()[0].crop_jpeg);
    found.push_back(std::move(f));
    report.name("enrolled").value(true).end_object();
  }
  report.end_array();
  std::size_t added = 0, duplicates = 0;
  std::int64_t identity = 0;
  if (!found.empty()) {
    std::lock_guard lock(write_mutex_);
    Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadWrite);
    if (!store) return failure(store.error());
    std::vector<gallery::NewTemplate> templates;
    for (const Found& f : found) templates.push_back(f.t);
    const std::string metadata = R"({"enrolled_from":"web page"})";
    Result<GalleryStore::WriteBatch> batch = store.value().begin_write();
    if (!batch) return failure(batch.error());
    Result<gallery::Enrolled> e = batch.value().enroll(name, metadata, templates);
    if (!e) return failure(e.error());
    if (gallery::Status s = batch.value().commit(); !s) return failure(s.error());
    identity = e.value().identity;
    added = e.value().added;
    duplicates = e.value().duplicates;
    std::vector<TemplateCrop> crops;
    for (Found& f : found) crops.push_back({f.source, std::move(f.crop)});
    keep_thumbnails(options_.gallery, store.value(), identity, crops);
  }
  report.name("person").value(name).name("identity").value(identity);
  report.name("enrolled").value(added).name("duplicates").value(duplicates);
  report.name("failed").value(files.size() - found.size()).name("dropped").value(dropped);
  report.end_object();
  return {found.empty() ? 422u : 200u, "application/json", report.text()};
}

ApiReply FaceLibrary::remove_person(const std::string& name) {
  std::lock_guard lock(write_mutex_);
  Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadWrite);
  if (!store) return failure(store.error());
  Result<bool> removed = store.value().remove(name);
  if (!removed) return failure(removed.error());
  if (!removed.value()) return error_reply(404, "no person named " + gallery::printable_source(name));
  if (Result<gallery::TemplateThumbnails> thumbs = gallery::TemplateThumbnails::open(options_.gallery, true))
    (void)thumbs.value().remove_orphans();
  JsonText j;
  j.object().name("removed").value(name).end_object();
  return {200, "application/json", j.text()};
}

ApiReply FaceLibrary::rename_person(const std::string& name, const std::string& new_name) {
  std::lock_guard lock(write_mutex_);
  Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadWrite);
  if (!store) return failure(store.error());
  Result<bool> renamed = store.value().rename(name, new_name);
  if (!renamed) return failure(renamed.error());
  if (!renamed.value()) return error_reply(404, "no person named " + gallery::printable_source(name));
  JsonText j;
  j.object().name("renamed").value(name).name("name").value(new_name).end_object();
  return {200, "application/json", j.text()};
}

ApiReply FaceLibrary::remove_template(std::int64_t template_id) {
  std::lock_guard lock(write_mutex_);
  Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadWrite);
  if (!store) return failure(store.error());
  Result<bool> removed = store.value().remove_template(template_id);
  if (!removed) return failure(removed.error());
  if (!removed.value()) return error_reply(404, "no template " + std::to_string(template_id));
  if (Result<gallery::TemplateThumbnails> thumbs = gallery::TemplateThumbnails::open(options_.gallery, true))
    (void)thumbs.value().remove_orphans();
  JsonText j;
  j.object().name("removed_template").value(template_id).end_object();
  return {200, "application/json", j.text()};
}

namespace {

using Clustered = gallery::ClusteredUnknowns;

// At most this many faces of a cluster are listed (the best by quality): the page shows a few.
constexpr std::size_t kListedFacesPerCluster = 12;

}  // namespace

ApiReply FaceLibrary::unknowns() {
  Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return failure(store.error());
  Result<GalleryStore::ReadSnapshot> snapshot = store.value().read_snapshot();
  if (!snapshot) return failure(snapshot.error());
  Result<Clustered> c = gallery::read_unknown_clusters(store.value(), options_.cluster_threshold);
  if (!c) return failure(c.error());
  const std::vector<gallery::UnknownFaceRow>& faces = c.value().faces;
  JsonText j;
  j.array();
  for (const gallery::UnknownCluster& cluster : c.value().clusters) {
    std::set<std::string> cameras;
    const gallery::UnknownFaceRow& front = faces[cluster.members.front()];
    std::int64_t first = front.first_seen_ms, last = front.last_seen_ms;
    const gallery::UnknownFaceRow* nearest = nullptr;
    for (std::size_t m : cluster.members) {
      cameras.insert(faces[m].stream);
      first = std::min(first, faces[m].first_seen_ms);
      last = std::max(last, faces[m].last_seen_ms);
      if (faces[m].nearest_identity != 0 && (!nearest || faces[m].nearest_similarity > nearest->nearest_similarity))
        nearest = &faces[m];
    }
    j.object().name("cluster").value(cluster.id);
    j.name("key").value(gallery::cluster_key(cluster.id, gallery::cluster_face_ids(cluster, faces)));
    j.name("size").value(cluster.members.size());
    j.name("cameras").array();
    for (const std::string& camera : cameras) j.value(camera);
    j.end_array();
    j.name("first_seen_ms").value(first).name("last_seen_ms").value(last);
    j.name("nearest");
    if (nearest)
      j.object().name("name").value(nearest->nearest_name).name("similarity").value(nearest->nearest_similarity)
          .end_object();
    else
      j.null();
    std::vector<const gallery::UnknownFaceRow*> best;
    for (std::size_t m : cluster.members) best.push_back(&faces[m]);
    std::stable_sort(best.begin(), best.end(), [](auto* a, auto* b) {
      return a->quality != b->quality ? a->quality > b->quality : a->id < b->id;
    });
    if (best.size() > kListedFacesPerCluster) best.resize(kListedFacesPerCluster);
    j.name("faces").array();
    for (const gallery::UnknownFaceRow* f : best)
      j.object().name("id").value(f->id).name("camera").value(f->stream).name("first_seen_ms").value(f->first_seen_ms)
          .name("last_seen_ms").value(f->last_seen_ms).name("picture")
          .value("/api/unknowns/faces/" + std::to_string(f->id) + ".jpg").end_object();
    j.end_array().end_object();
  }
  j.end_array();
  return {200, "application/json", j.text()};
}

ApiReply FaceLibrary::unknown_face_picture(std::int64_t face_id) {
  Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return failure(store.error());
  const std::int64_t ids[] = {face_id};
  Result<std::vector<std::vector<unsigned char>>> got = store.value().unknown_face_pictures(ids);
  if (!got) return failure(got.error());
  if (got.value()[0].empty()) return error_reply(404, "unknown face " + std::to_string(face_id) + " has no picture");
  return bytes_reply(std::move(got.value()[0]), "image/jpeg");
}

namespace {

// Runs `change` on the cluster listed under `key`, inside one write that first checks the cluster
// still holds exactly the faces listed (otherwise 409: list again; nothing changed). `change` may read
// the store (inside the write) before it changes it.
template <typename Change>
ApiReply change_cluster(const WebServerOptions& o, const std::string& key, Change change) {
  const std::optional<gallery::ClusterKey> parts = gallery::parse_cluster_key(key);
  if (!parts || !parts->size) return error_reply(400, "a cluster key is ID:SIZE:DIGEST as GET /api/unknowns lists it");
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadWrite);
  if (!store) return failure(store.error());
  Result<GalleryStore::WriteBatch> batch = store.value().begin_write();
  if (!batch) return failure(batch.error());
  Result<Clustered> c = gallery::read_unknown_clusters(store.value(), o.cluster_threshold);
  if (!c) return failure(c.error());
  const gallery::UnknownCluster* found = nullptr;
  for (const gallery::UnknownCluster& cluster : c.value().clusters)
    if (cluster.id == parts->id) found = &cluster;
  if (!found || !gallery::cluster_matches_key(*found, c.value().faces, *parts))
    return error_reply(409, "cluster " + std::to_string(parts->id) +
                                " no longer holds the faces listed (faces arrived or were removed): list again; "
                                "nothing changed");
  Result<std::string> done = change(store.value(), batch.value(), *found, c.value().faces);
  if (!done) return failure(done.error());
  if (gallery::Status s = batch.value().commit(); !s) return failure(s.error());
  return {200, "application/json", done.value()};
}

}  // namespace

ApiReply FaceLibrary::name_cluster(const std::string& key, const std::string& person, bool merge) {
  if (gallery::Status s = gallery::check_identity_name(person); !s) return failure(s.error());
  std::lock_guard lock(write_mutex_);
  {
    Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadOnly);
    if (!store) return failure(store.error());
    Result<std::vector<gallery::IdentityRow>> ids = store.value().identities();
    if (!ids) return failure(ids.error());
    const bool exists = std::any_of(ids.value().begin(), ids.value().end(),
                                    [&](const gallery::IdentityRow& r) { return r.name == person; });
    if (merge && !exists) return error_reply(404, "no person named " + person + " to merge into");
    if (!merge && exists) return error_reply(409, person + " already exists: merge the cluster into them instead");
  }
  std::int64_t identity = 0;
  std::vector<TemplateCrop> crops;
  ApiReply reply = change_cluster(options_, key, [&](const GalleryStore& store, GalleryStore::WriteBatch& batch,
                                                     const gallery::UnknownCluster& cluster,
                                                     const std::vector<gallery::UnknownFaceRow>& faces)
                                                     -> Result<std::string> {
    std::vector<const gallery::UnknownFaceRow*> best;
    for (std::size_t m : cluster.members) best.push_back(&faces[m]);
    std::stable_sort(best.begin(), best.end(), [](auto* a, auto* b) {
      return a->quality != b->quality ? a->quality > b->quality : a->id < b->id;
    });
    if (best.size() > options_.name_templates) best.resize(options_.name_templates);
    std::vector<gallery::NewTemplate> templates;
    std::vector<std::int64_t> best_ids;
    for (const gallery::UnknownFaceRow* f : best) {
      templates.push_back({f->embedding, f->norm, "unknown face " + std::to_string(f->id) + " (" + f->stream + ")", 0});
      best_ids.push_back(f->id);
    }
    // The faces' pictures become the templates' thumbnails: read before the faces are removed (none
    // on a read error: the naming goes on without them).
    Result<std::vector<std::vector<unsigned char>>> pictures = store.unknown_face_pictures(best_ids);
    crops.clear();
    if (pictures)
      for (std::size_t i = 0; i < templates.size(); ++i)
        crops.push_back({templates[i].source, std::move(pictures.value()[i])});
    const std::string metadata = R"({"enrolled_from":"web page unknown-faces review","cluster":)" +
                                 std::to_string(cluster.id) + "}";
    Result<gallery::Enrolled> enrolled = batch.enroll(person, metadata, templates);
    if (!enrolled) return enrolled.error();
    identity = enrolled.value().identity;
    Result<std::size_t> removed = batch.remove_unknown_faces(gallery::cluster_face_ids(cluster, faces));
    if (!removed) return removed.error();
    JsonText j;
    j.object().name("person").value(person).name("identity").value(enrolled.value().identity);
    j.name("enrolled").value(enrolled.value().added).name("removed_unknown_faces").value(removed.value());
    j.end_object();
    return j.text();
  });
  if (reply.status == 200) {
    Result<GalleryStore> store = GalleryStore::open(options_.gallery, GalleryStore::Access::ReadOnly);
    if (store) keep_thumbnails(options_.gallery, store.value(), identity, crops);
  }
  return reply;
}

ApiReply FaceLibrary::forget_cluster(const std::string& key) {
  std::lock_guard lock(write_mutex_);
  return change_cluster(options_, key, [&](const GalleryStore&, GalleryStore::WriteBatch& batch,
                                           const gallery::UnknownCluster& cluster,
                                           const std::vector<gallery::UnknownFaceRow>& faces) -> Result<std::string> {
    Result<std::size_t> removed = batch.remove_unknown_faces(gallery::cluster_face_ids(cluster, faces));
    if (!removed) return removed.error();
    JsonText j;
    j.object().name("forgotten").value(cluster.id).name("removed_unknown_faces").value(removed.value()).end_object();
    return j.text();
  });
}

ApiReply FaceLibrary::recognize(std::span<const std::uint8_t> image) {
  Result<cv::Mat> decoded = decode_uploaded_image(image, options_.bounds.max_image_pixels, "the request body");
  if (!decoded) return failure(decoded.error());
  Result<std::shared_ptr<const gallery::GalleryIndex>> index = current_index();
  if (!index) return failure(index.error());
  BorrowedEngine engine = borrow();
  if (!engine.get()) return error_reply(503, "every engine is busy; try again");
  Result<std::vector<Engine::Face>> faces =
      engine.get()->faces_of(decoded.value(), options_.bounds.max_faces_per_image, false);
  if (!faces) return failure(faces.error());
  JsonText j;
  j.object().name("faces").array();
  for (const Engine::Face& f : faces.value()) {
    const std::vector<gallery::IdentityMatch> m = index.value()->search(f.embedding, 1);
    j.object().name("box").array();
    j.value(f.box.x).value(f.box.y).value(f.box.width).value(f.box.height).end_array();
    const bool known = !m.empty() && m[0].similarity >= threshold_;
    j.name("label");
    if (known)
      j.value(m[0].name);
    else
      j.null();
    j.name("confidence").value(m.empty() ? 0.0 : static_cast<double>(m[0].similarity));
    j.name("nearest");
    if (m.empty())
      j.null();
    else
      j.value(m[0].name);
    j.end_object();
  }
  j.end_array().name("threshold").value(threshold_).end_object();
  return {200, "application/json", j.text()};
}

}  // namespace taconite::app
