// Reviewing kept unknown faces (unknown_face.hpp) by cluster, as taconite-gallery's `unknowns`,
// `name` and `forget` and the web page's Unknown faces tab do it: the faces and their clusters read
// together, and each cluster's key, ID:SIZE:DIGEST (DIGEST: the first 8 hex digits of the SHA-256 of
// its face ids in increasing order joined by ","), which names exactly the faces a listing showed, so
// a change acts only when the cluster still holds them. A key is the same from the CLI and the page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gallery_store.hpp"
#include "unknown_clusters.hpp"

namespace taconite::gallery {

struct ClusteredUnknowns {
  std::vector<UnknownFaceRow> faces;  // with embeddings, without pictures
  std::vector<UnknownCluster> clusters;
};

// The gallery's unknown faces and their clusters at `threshold`, read in the caller's snapshot or
// write. An Io error saying the way out when the gallery holds more than kMaxUnknownFaces.
Result<ClusteredUnknowns> read_unknown_clusters(const GalleryStore& store, double threshold);

// The ids of a cluster's faces.
std::vector<std::int64_t> cluster_face_ids(const UnknownCluster& cluster, const std::vector<UnknownFaceRow>& faces);

inline constexpr std::size_t kClusterDigestDigits = 8;

struct ClusterKey {
  std::int64_t id = 0;
  std::optional<std::size_t> size;  // with the digest, or neither (a bare id)
  std::string digest;               // kClusterDigestDigits lowercase hex digits
};

// "17:5:3fa9c2d1" or "17" (at most 64 bytes); nullopt for anything else.
std::optional<ClusterKey> parse_cluster_key(const std::string& text);
// The key of the cluster `id` holding these face ids (any order).
std::string cluster_key(std::int64_t id, std::vector<std::int64_t> face_ids);
// True when `cluster` still holds exactly the faces `key` (a full key) names.
bool cluster_matches_key(const UnknownCluster& cluster, const std::vector<UnknownFaceRow>& faces,
                         const ClusterKey& key);

}  // namespace taconite::gallery
