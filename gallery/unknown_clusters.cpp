#include "unknown_clusters.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <numeric>
#include <string>

#include "simd_dot.hpp"

namespace taconite::gallery {

namespace {

// Union-find whose root is always a set's smallest index: with faces in id order, the root of a
// cluster is its smallest id.
class Components {
 public:
  explicit Components(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), std::size_t{0}); }
  std::size_t find(std::size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void join(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a < b)
      parent_[b] = a;
    else if (b < a)
      parent_[a] = b;
  }

 private:
  std::vector<std::size_t> parent_;
};

// A pair that may be linked: the other face (an index in id order) and the float similarity.
struct Candidate {
  std::uint32_t face;
  float similarity;
};

double exact_dot(const float* a, const float* b, std::size_t dim) {
  double sum = 0.0;
  for (std::size_t i = 0; i < dim; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

}  // namespace

Result<std::vector<UnknownCluster>> cluster_unknown_faces(std::span<const UnknownFaceRow> faces, double threshold) {
  if (!(threshold > 0.0 && threshold <= 1.0))
    return Error{ErrorKind::Input, "cluster threshold " + std::to_string(threshold) +
                                       " out of range: a cosine similarity in (0, 1]"};
  if (faces.size() > kMaxUnknownFaces)
    return Error{ErrorKind::Input, std::to_string(faces.size()) + " unknown faces, at most " +
                                       std::to_string(kMaxUnknownFaces) + " are clustered"};
  std::vector<UnknownCluster> clusters;
  if (faces.empty()) return clusters;
  const std::size_t dim = faces.front().embedding.size();
  for (const UnknownFaceRow& f : faces)
    if (f.embedding.empty() || f.embedding.size() != dim)
      return Error{ErrorKind::Input, "unknown face " + std::to_string(f.id) + " has " +
                                         std::to_string(f.embedding.size()) + " embedding values, expected " +
                                         std::to_string(dim) + " (read them with their embeddings)"};

  // In id order: the result cannot depend on the order given.
  const std::size_t n = faces.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return faces[a].id < faces[b].id; });
  std::vector<float> vectors(n * dim);
  for (std::size_t i = 0; i < n; ++i)
    std::copy(faces[order[i]].embedding.begin(), faces[order[i]].embedding.end(), vectors.begin() + i * dim);

  Components components(n);
  try {
    // Rows of the upper triangle in blocks, so the candidate pairs held stay bounded.
    const std::size_t block = std::max<std::size_t>(1, kMaxCandidatePairs / n);
    for (std::size_t start = 0; start < n; start += block) {
      const std::size_t end = std::min(n, start + block);
      std::vector<std::vector<Candidate>> rows(end - start);
      bool failed = false;
#pragma omp parallel for schedule(dynamic, 8)
      for (std::size_t i = start; i < end; ++i) {
        try {
          // Every pair that may reach the threshold, with margin for float rounding.
          for (std::size_t j = i + 1; j < n; ++j)
            if (const float s = dot_f32(&vectors[i * dim], &vectors[j * dim], dim);
                s >= threshold - kClusterRoundingMargin)
              rows[i - start].push_back({static_cast<std::uint32_t>(j), s});
        } catch (...) {  // bad_alloc: no exception may leave an OpenMP region
#pragma omp atomic write
          failed = true;
        }
      }
      if (failed) return Error{ErrorKind::Io, "cannot cluster the unknown faces: out of memory"};
      for (std::size_t i = start; i < end; ++i)
        for (const Candidate& c : rows[i - start]) {
          if (components.find(i) == components.find(c.face)) continue;
          // Far from the threshold the float is decisive; near it, the exact dot product is.
          const double similarity = c.similarity >= threshold + kClusterRoundingMargin
                                        ? 1.0
                                        : exact_dot(&vectors[i * dim], &vectors[c.face * dim], dim);
          if (similarity >= threshold) components.join(i, c.face);
        }
    }
  } catch (const std::exception& e) {  // bad_alloc
    return Error{ErrorKind::Io, std::string("cannot cluster the unknown faces: ") + e.what()};
  }

  std::vector<std::size_t> cluster_of(n, n);  // root -> index in clusters
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t root = components.find(i);
    if (cluster_of[root] == n) {
      cluster_of[root] = clusters.size();
      clusters.push_back({faces[order[root]].id, {}});
    }
    clusters[cluster_of[root]].members.push_back(order[i]);
  }
  std::stable_sort(clusters.begin(), clusters.end(), [](const UnknownCluster& a, const UnknownCluster& b) {
    return a.members.size() != b.members.size() ? a.members.size() > b.members.size() : a.id < b.id;
  });
  return clusters;
}

}  // namespace taconite::gallery
