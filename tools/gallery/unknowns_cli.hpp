// taconite-gallery's review of kept unknown faces: `unknowns` lists their clusters with a contact
// sheet each, `name` enrols a cluster as an identity, `forget` deletes a cluster's faces. The
// clusters are computed on each call (gallery/unknown_clusters.hpp) at the threshold given.
#pragma once

#include <cstdint>
#include <string>

#include "gallery_store.hpp"
#include "unknown_clusters.hpp"

namespace taconite::gallery_cli {

// Where `unknowns` writes its contact sheets unless --sheets says otherwise.
inline constexpr const char* kDefaultSheetsDir = "unknown-faces";
// Templates `name` enrols from a cluster (its best faces by quality) unless --templates says.
inline constexpr std::size_t kDefaultNameTemplates = 5;
inline constexpr std::size_t kMaxNameTemplates = 100;

struct ReviewOptions {
  std::string gallery;
  double threshold = gallery::kDefaultClusterThreshold;
  std::string sheets = kDefaultSheetsDir;
  bool json = false;
  std::size_t templates = kDefaultNameTemplates;
};

// Each prints what it did on stdout; an error names the gallery (and the cluster).
gallery::Status list_unknowns(const ReviewOptions& o);
gallery::Status name_cluster(const ReviewOptions& o, std::int64_t cluster, const std::string& name);
gallery::Status forget_cluster(const ReviewOptions& o, std::int64_t cluster);

}  // namespace taconite::gallery_cli
