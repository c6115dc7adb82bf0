// Clusters of kept unknown faces (taconite-gallery unknowns, name, forget): the same person seen
// on several tracks and cameras. A cluster is a connected component of the graph whose edges join
// two faces with cosine similarity >= threshold (single linkage), found exactly: every pair is
// scored with the gallery's AVX2 dot product (simd_dot.hpp), on all cores (OpenMP), rows in
// blocks so the candidate pairs held stay bounded. (FAISS's IndexFlatIP::range_search goes
// through BLAS, which is netlib's reference BLAS on Debian unless OpenBLAS is installed: 40 s
// instead of ~1 s for 10 k faces.)
//
// Deterministic: the same faces give the same clusters whatever their order and however many
// threads run (a pair scored within kClusterRoundingMargin of the threshold is decided again by a
// dot product in double precision, in a fixed order, so not even the CPU's kernels matter). A cluster's id is the
// smallest face id in it: it stays the cluster's id while faces are added (a newcomer only joins
// or merges clusters, and a merged cluster keeps the smaller id). Whether it still holds the faces
// a listing showed is the key's job (taconite-gallery's unknowns_cli.hpp).
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
// Float similarities are this close to the exact ones (512 products of unit vectors).
inline constexpr double kClusterRoundingMargin = 1e-4;
// At most this many candidate pairs (8 bytes each) are held at a time.
inline constexpr std::size_t kMaxCandidatePairs = 4 * 1024 * 1024;

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
