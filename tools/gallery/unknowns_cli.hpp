// taconite-gallery's review of kept unknown faces: `unknowns` lists their clusters (with a
// contact sheet each when asked), `name` enrols a cluster as an identity, `forget` deletes a
// cluster's faces (or every face stored before a time). The clusters are computed on each call
// (gallery/unknown_clusters.hpp) at the threshold given.
//
// A listing prints each cluster's key, ID:SIZE:DIGEST (DIGEST: the first 8 hex digits of the
// SHA-256 of its face ids in increasing order, as decimal text joined by ","). `name` and
// `forget` take that key and act only when the cluster, clustered again at their threshold, holds
// exactly those faces: another --threshold, faces arrived or deleted since the listing, give
// another membership and a refusal ("list again") instead of acting on faces nobody saw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gallery_store.hpp"
#include "unknown_clusters.hpp"
#include "unknown_review.hpp"

namespace taconite::gallery_cli {

// Templates `name` enrols from a cluster (its best faces by quality) unless --templates says.
inline constexpr std::size_t kDefaultNameTemplates = 5;
inline constexpr std::size_t kMaxNameTemplates = 100;
// --older-than takes whole days up to this (a century).
inline constexpr std::int64_t kMaxOlderThanDays = 36500;

struct ReviewOptions {
  std::string gallery;
  double threshold = gallery::kDefaultClusterThreshold;
  std::string sheets;  // where `unknowns` writes contact sheets; empty: none are written
  bool json = false;
  std::size_t templates = kDefaultNameTemplates;
};

// A cluster as name/forget are given it: the key a listing printed, or a bare id (refused
// when it is a cluster: the membership cannot be checked). gallery/unknown_review.hpp.
using gallery::ClusterKey;
using gallery::cluster_key;
using gallery::parse_cluster_key;

// Each prints what it did on stdout; an error names the gallery (and the cluster).
gallery::Status list_unknowns(const ReviewOptions& o);
gallery::Status name_cluster(const ReviewOptions& o, const ClusterKey& cluster, const std::string& name);
gallery::Status forget_cluster(const ReviewOptions& o, const ClusterKey& cluster);
// Deletes every unknown face stored more than `days` days ago (0: all of them).
gallery::Status forget_older_than(const ReviewOptions& o, std::int64_t days);

}  // namespace taconite::gallery_cli
