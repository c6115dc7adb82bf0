#include "unknowns_cli.hpp"

#include <glib.h>
#include <json-glib/json-glib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "contact_sheet.hpp"
#include "identity_fields.hpp"
#include "iso_time.hpp"
#include "json_write.hpp"
#include "unix_time.hpp"

namespace taconite::gallery_cli {

using gallery::Status;

namespace {

using gallery::GalleryStore;
using gallery::UnknownCluster;
using gallery::UnknownFaceRow;
namespace fs = std::filesystem;


// What a listing says about a cluster.
struct ClusterSummary {
  std::set<std::string> cameras;
  std::int64_t first_ms = 0, last_ms = 0;
  const UnknownFaceRow* nearest = nullptr;  // the face closest to a known identity, if any had one
};

ClusterSummary summarize(const UnknownCluster& c, const std::vector<UnknownFaceRow>& faces) {
  ClusterSummary s;
  s.first_ms = faces[c.members.front()].first_seen_ms;
  s.last_ms = faces[c.members.front()].last_seen_ms;
  for (std::size_t m : c.members) {
    const UnknownFaceRow& f = faces[m];
    s.cameras.insert(f.stream);
    s.first_ms = std::min(s.first_ms, f.first_seen_ms);
    s.last_ms = std::max(s.last_ms, f.last_seen_ms);
    if (f.nearest_identity != 0 && (!s.nearest || f.nearest_similarity > s.nearest->nearest_similarity))
      s.nearest = &f;
  }
  return s;
}


// A time as a JSON string, null when it has no ISO 8601 text (a tampered row).
void add_time(JsonBuilder* b, const char* member, std::int64_t unix_ms) {
  json_builder_set_member_name(b, member);
  if (const std::optional<std::string> text = iso_utc(unix_ms))
    json_builder_add_string_value(b, text->c_str());
  else
    json_builder_add_null_value(b);
}

std::string json_line(const UnknownCluster& c, const ClusterSummary& s, const std::vector<UnknownFaceRow>& faces,
                      const std::string& key, const std::string& sheet) {
  JsonBuilder* b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "cluster");
  json_builder_add_int_value(b, c.id);
  json_builder_set_member_name(b, "key");
  json_builder_add_string_value(b, key.c_str());
  json_builder_set_member_name(b, "size");
  json_builder_add_int_value(b, static_cast<gint64>(c.members.size()));
  json_builder_set_member_name(b, "cameras");
  json_builder_begin_array(b);
  for (const std::string& camera : s.cameras) json_builder_add_string_value(b, camera.c_str());
  json_builder_end_array(b);
  add_time(b, "first_seen", s.first_ms);
  add_time(b, "last_seen", s.last_ms);
  json_builder_set_member_name(b, "nearest");
  if (s.nearest) {
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "identity");
    json_builder_add_int_value(b, s.nearest->nearest_identity);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, s.nearest->nearest_name.c_str());
    json_builder_set_member_name(b, "similarity");
    json_builder_add_double_value(b, s.nearest->nearest_similarity);
    json_builder_end_object(b);
  } else {
    json_builder_add_null_value(b);
  }
  json_builder_set_member_name(b, "faces");
  json_builder_begin_array(b);
  for (std::size_t m : c.members) json_builder_add_int_value(b, faces[m].id);
  json_builder_end_array(b);
  json_builder_set_member_name(b, "sheet");
  if (sheet.empty())
    json_builder_add_null_value(b);
  else
    json_builder_add_string_value(b, sheet.c_str());
  json_builder_end_object(b);
  JsonNode* root = json_builder_get_root(b);
  std::string line = json::write_json(root);
  json_node_unref(root);
  g_object_unref(b);
  return line;
}

Status sheet_of(const GalleryStore& store, const UnknownCluster& c, const std::vector<UnknownFaceRow>& faces,
                const fs::path& path) {
  // The best faces only, and their pictures only now: a sheet holds at most kSheetFaces.
  std::vector<UnknownFaceRow> shown;
  for (std::size_t m : c.members) {
    shown.push_back(faces[m]);
    shown.back().embedding.clear();
  }
  std::stable_sort(shown.begin(), shown.end(), [](const UnknownFaceRow& a, const UnknownFaceRow& b) {
    return a.quality != b.quality ? a.quality > b.quality : a.id < b.id;
  });
  if (shown.size() > kSheetFaces) shown.resize(kSheetFaces);
  std::vector<std::int64_t> ids;
  for (const UnknownFaceRow& f : shown) ids.push_back(f.id);
  Result<std::vector<std::vector<unsigned char>>> pictures = store.unknown_face_pictures(ids);
  if (!pictures) return pictures.error();
  std::vector<const UnknownFaceRow*> rows;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    shown[i].jpeg = std::move(pictures.value()[i]);
    rows.push_back(&shown[i]);
  }
  return write_contact_sheet(path, rows);
}

using Clustered = gallery::ClusteredUnknowns;

std::string threshold_text(double threshold) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", threshold);
  return text;
}

Result<const UnknownCluster*> find_cluster(const Clustered& c, std::int64_t id, double threshold,
                                           const std::string& gallery) {
  for (const UnknownCluster& cluster : c.clusters)
    if (cluster.id == id) return &cluster;
  std::string hint = " (list them with taconite-gallery unknowns)";
  for (const UnknownCluster& cluster : c.clusters)
    for (std::size_t m : cluster.members)
      if (c.faces[m].id == id)
        hint = " (face " + std::to_string(id) + " is in cluster " + std::to_string(cluster.id) + ")";
  return Error{ErrorKind::Input, gallery + ": no cluster " + std::to_string(id) + " among " +
                                     std::to_string(c.faces.size()) + " unknown face(s) at threshold " +
                                     threshold_text(threshold) + hint + "; nothing changed"};
}

// Input error unless the cluster holds exactly the faces its listed key names.
Status check_membership(const UnknownCluster& cluster, const std::vector<UnknownFaceRow>& faces,
                        const ClusterKey& listed, double threshold, const std::string& gallery) {
  const std::string now = std::to_string(cluster.members.size()) + " face(s) at threshold " + threshold_text(threshold);
  const std::string where = gallery + ": cluster " + std::to_string(cluster.id);
  if (!listed.size)
    return Error{ErrorKind::Input, where + " (now " + now + ") is given by its id only: give the key taconite-gallery "
                                           "unknowns lists for it (ID:SIZE:DIGEST), so that only the faces listed are "
                                           "changed; nothing changed"};
  if (gallery::cluster_matches_key(cluster, faces, listed)) return gallery::Ok{};
  const std::string differs = *listed.size == cluster.members.size()
                                  ? "the same number of faces, but not the same faces"
                                  : std::to_string(*listed.size) + " listed";
  return Error{ErrorKind::Input, where + " is not the one listed: it now holds " + now + " (" + differs +
                                     "): faces arrived or were deleted since the listing, or the listing used "
                                     "another --threshold; list again; nothing changed"};
}

// Opens a write, finds the cluster inside it (so what `change` sees is what it changes, whatever
// arrives meanwhile) and checks it holds the faces listed, lets `change` write, commits, and then
// prints what `change` says it did.
template <typename Change>
Status change_cluster(const ReviewOptions& o, const ClusterKey& key, Change change) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadWrite);
  if (!store) return store.error();
  Result<GalleryStore::WriteBatch> batch = store.value().begin_write();
  if (!batch) return batch.error();
  Result<Clustered> c = gallery::read_unknown_clusters(store.value(), o.threshold);
  if (!c) return c.error();
  Result<const UnknownCluster*> found = find_cluster(c.value(), key.id, o.threshold, o.gallery);
  if (!found) return found.error();
  if (Status s = check_membership(*found.value(), c.value().faces, key, o.threshold, o.gallery); !s) return s;
  Result<std::string> done = change(batch.value(), *found.value(), c.value().faces);
  if (!done) return done.error();
  if (Status s = batch.value().commit(); !s) return s;
  std::printf("%s\n", done.value().c_str());
  return gallery::Ok{};
}

}  // namespace

Status list_unknowns(const ReviewOptions& o) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadOnly);
  if (!store) return store.error();
  Result<GalleryStore::ReadSnapshot> snapshot = store.value().read_snapshot();  // faces and pictures agree
  if (!snapshot) return snapshot.error();
  Result<Clustered> c = gallery::read_unknown_clusters(store.value(), o.threshold);
  if (!c) return c.error();
  if (c.value().clusters.empty()) {
    if (!o.json) std::printf("no unknown faces kept in %s\n", o.gallery.c_str());
    return gallery::Ok{};
  }
  if (!o.sheets.empty()) {
    std::error_code ec;
    fs::create_directories(o.sheets, ec);
    if (ec) return Error{ErrorKind::Io, o.sheets + ": cannot make the contact sheet directory: " + ec.message()};
  }
  for (const UnknownCluster& cluster : c.value().clusters) {
    std::string sheet;
    if (!o.sheets.empty()) {
      sheet = (fs::path(o.sheets) / ("cluster-" + std::to_string(cluster.id) + ".jpg")).string();
      if (Status s = sheet_of(store.value(), cluster, c.value().faces, sheet); !s) return s;
    }
    const ClusterSummary s = summarize(cluster, c.value().faces);
    const std::string key = cluster_key(cluster.id, gallery::cluster_face_ids(cluster, c.value().faces));
    if (o.json) {
      std::printf("%s\n", json_line(cluster, s, c.value().faces, key, sheet).c_str());
      continue;
    }
    std::string cameras;
    for (const std::string& camera : s.cameras) cameras += (cameras.empty() ? "" : ",") + camera;
    std::string nearest = "nearest none";
    if (s.nearest) {
      char score[32];
      std::snprintf(score, sizeof score, "%.3f", s.nearest->nearest_similarity);
      nearest = "nearest " + s.nearest->nearest_name + " (" + score + ")";
    }
    std::printf("cluster %lld\t%zu face(s)\t%s\t%s .. %s\t%s\tkey %s%s%s\n", static_cast<long long>(cluster.id),
                cluster.members.size(), cameras.c_str(), iso_utc_or_invalid(s.first_ms).c_str(),
                iso_utc_or_invalid(s.last_ms).c_str(), nearest.c_str(), key.c_str(), sheet.empty() ? "" : "\t",
                sheet.c_str());
  }
  return gallery::Ok{};
}

Status name_cluster(const ReviewOptions& o, const ClusterKey& cluster_key, const std::string& name) {
  if (Status s = gallery::check_identity_name(name); !s) return s.error();
  return change_cluster(o, cluster_key, [&](GalleryStore::WriteBatch& batch, const UnknownCluster& cluster,
                                            const std::vector<UnknownFaceRow>& faces) -> Result<std::string> {
    std::vector<const UnknownFaceRow*> best;
    for (std::size_t m : cluster.members) best.push_back(&faces[m]);
    std::stable_sort(best.begin(), best.end(), [](const UnknownFaceRow* a, const UnknownFaceRow* b) {
      return a->quality != b->quality ? a->quality > b->quality : a->id < b->id;
    });
    if (best.size() > o.templates) best.resize(o.templates);
    std::vector<gallery::NewTemplate> templates;
    for (const UnknownFaceRow* f : best)
      templates.push_back({f->embedding, f->norm, "unknown face " + std::to_string(f->id) + " (" + f->stream + ")", 0});
    const std::string metadata = R"({"enrolled_from":"unknown-faces review","cluster":)" +
                                 std::to_string(cluster.id) + R"(,"named_unix":)" +
                                 std::to_string(gallery::now_unix()) + "}";
    Result<gallery::Enrolled> enrolled = batch.enroll(name, metadata, templates);
    if (!enrolled) return enrolled.error();
    Result<std::size_t> removed = batch.remove_unknown_faces(gallery::cluster_face_ids(cluster, faces));
    if (!removed) return removed.error();
    return "named cluster " + std::to_string(cluster.id) + " " + name + ": enrolled " +
           std::to_string(enrolled.value().added) + " template(s) (identity " +
           std::to_string(enrolled.value().identity) + "), removed " + std::to_string(removed.value()) +
           " unknown face(s)";
  });
}

Status forget_cluster(const ReviewOptions& o, const ClusterKey& cluster_key) {
  return change_cluster(o, cluster_key, [&](GalleryStore::WriteBatch& batch, const UnknownCluster& cluster,
                                            const std::vector<UnknownFaceRow>& faces) -> Result<std::string> {
    Result<std::size_t> removed = batch.remove_unknown_faces(gallery::cluster_face_ids(cluster, faces));
    if (!removed) return removed.error();
    return "forgot cluster " + std::to_string(cluster.id) + ": deleted " + std::to_string(removed.value()) +
           " unknown face(s)";
  });
}

Status forget_older_than(const ReviewOptions& o, std::int64_t days) {
  Result<GalleryStore> store = GalleryStore::open(o.gallery, GalleryStore::Access::ReadWrite);
  if (!store) return store.error();
  // Stored before now - days (0 days: every face, a clock set back included).
  const std::int64_t cutoff =
      days == 0 ? std::numeric_limits<std::int64_t>::max() : gallery::now_unix() - days * 86400;
  Result<std::size_t> removed = store.value().remove_unknown_faces_stored_before(cutoff);
  if (!removed) return removed.error();
  Result<std::size_t> left = store.value().unknown_face_count();
  if (!left) return left.error();
  const std::string which = days == 0 ? "" : " stored more than " + std::to_string(days) + " day(s) ago";
  std::printf("forgot %zu unknown face(s)%s; %zu kept\n", removed.value(), which.c_str(), left.value());
  return gallery::Ok{};
}

}  // namespace taconite::gallery_cli
