// Clusters of kept unknown faces (taconite-gallery unknowns, name, forget): the same person seen
// on several tracks and cameras. A cluster is a connected component of the graph whose edges join
// two faces with cosine similarity >= threshold (single linkage), found exactly with FAISS
// (IndexFlatIP range search, in blocks of queries so the results held stay bounded).
//
// Deterministic: the same faces give the same clusters whatever their order and however many
// threads FAISS uses (a pair FAISS scores within kClusterRoundingMargin of the threshold is
// decided again by a dot product in double precision, in a fixed order). A cluster's id is the
// smallest face id in it: it stays the cluster's id while faces are added (a newcomer only joins
// or merges clusters, and a merged cluster keeps the smaller id), so `name 17 Alice` after a
// listing names the faces that listing showed, plus any that joined since.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gallery_store.hpp"

namespace taconite::gallery {

// Single linkage chains: faces A-B and B-C above the threshold join A and C. So the default is
// stricter than taconiteidentify's match threshold (0.4, "this face is that identity"): 0.5 asks
// more of every link in a chain (docs/deployment.md, "Unknown faces").
inline constexpr double kDefaultClusterThreshold = 0.5;
// FAISS's float similarities are this close to the exact ones (512 products of unit vectors).
inline constexpr double kClusterRoundingMargin = 1e-4;
// The range search holds at most this many (query, neighbour) results at a time (12 bytes each).
inline constexpr std::size_t kMaxRangeResults = 4 * 1024 * 1024;

struct UnknownCluster {
  std::int64_t id = 0;               // the smallest face id in it
  std::vector<std::size_t> members;  // indices into the faces given, in face-id order
};

// Clusters of `faces` (read with embeddings, of one size), largest first, ties by id. Input error
// for a threshold outside (0, 1], faces without embeddings or of different sizes, or more than
// kMaxUnknownFaces faces.
Result<std::vector<UnknownCluster>> cluster_unknown_faces(std::span<const UnknownFaceRow> faces,
                                                          double threshold = kDefaultClusterThreshold);

}  // namespace taconite::gallery
