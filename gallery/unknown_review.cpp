#include "unknown_review.hpp"

#include <glib.h>

#include <algorithm>
#include <charconv>
#include <string_view>

namespace taconite::gallery {

Result<ClusteredUnknowns> read_unknown_clusters(const GalleryStore& store, double threshold) {
  // Counted first, without reading a face: past the bound the answer says the way out, and
  // `stats` and `forget --older-than` still work.
  Result<std::size_t> count = store.unknown_face_count();
  if (!count) return count.error();
  if (count.value() > kMaxUnknownFaces)
    return Error{ErrorKind::Io, store.path().string() + ": holds " + std::to_string(count.value()) +
                                    " unknown faces, more than the " + std::to_string(kMaxUnknownFaces) +
                                    " this program clusters: delete the oldest with taconite-gallery forget GALLERY "
                                    "--older-than DAYS (taconite-gallery stats counts them), or lower the retention"};
  Result<std::vector<UnknownFaceRow>> faces = store.unknown_faces(true, false);
  if (!faces) return faces.error();
  ClusteredUnknowns c{std::move(faces.value()), {}};
  Result<std::vector<UnknownCluster>> clusters = cluster_unknown_faces(c.faces, threshold);
  if (!clusters) return Error{clusters.error().kind, store.path().string() + ": " + clusters.error().message};
  c.clusters = std::move(clusters.value());
  return c;
}

std::vector<std::int64_t> cluster_face_ids(const UnknownCluster& cluster, const std::vector<UnknownFaceRow>& faces) {
  std::vector<std::int64_t> ids;
  for (std::size_t m : cluster.members) ids.push_back(faces[m].id);
  return ids;
}

std::optional<ClusterKey> parse_cluster_key(const std::string& text) {
  if (text.size() > 64) return std::nullopt;
  auto number = [](std::string_view part, auto& value) {
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    return ec == std::errc() && ptr == part.data() + part.size();
  };
  const std::string_view all(text);
  ClusterKey key;
  const std::size_t first = all.find(':');
  if (!number(all.substr(0, first), key.id) || key.id < 1) return std::nullopt;
  if (first == std::string_view::npos) return key;
  const std::size_t second = all.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  std::size_t size = 0;
  if (!number(all.substr(first + 1, second - first - 1), size) || size < 1) return std::nullopt;
  const std::string_view digest = all.substr(second + 1);
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (digest.size() != kClusterDigestDigits || !std::all_of(digest.begin(), digest.end(), hex)) return std::nullopt;
  key.size = size;
  key.digest = digest;
  return key;
}

std::string cluster_key(std::int64_t id, std::vector<std::int64_t> face_ids) {
  std::sort(face_ids.begin(), face_ids.end());
  std::string text;
  for (std::size_t i = 0; i < face_ids.size(); ++i) text += (i ? "," : "") + std::to_string(face_ids[i]);
  gchar* sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text.c_str(), static_cast<gssize>(text.size()));
  const std::string digest(sha256, kClusterDigestDigits);
  g_free(sha256);
  return std::to_string(id) + ":" + std::to_string(face_ids.size()) + ":" + digest;
}

bool cluster_matches_key(const UnknownCluster& cluster, const std::vector<UnknownFaceRow>& faces,
                         const ClusterKey& key) {
  return key.size && cluster.id == key.id &&
         cluster_key(cluster.id, cluster_face_ids(cluster, faces)) ==
             std::to_string(key.id) + ":" + std::to_string(*key.size) + ":" + key.digest;
}

}  // namespace taconite::gallery
