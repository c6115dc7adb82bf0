// The key under which GET /api/unknowns lists a cluster, ID:SIZE:DIGEST, in the same form as
// taconite-gallery's (tools/gallery/unknowns_cli.hpp: DIGEST is the first 8 hex digits of the
// SHA-256 of the face ids in increasing order joined by ","), so a key is interchangeable between
// the page and the CLI. Naming or forgetting acts only when the cluster still holds those faces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace taconite::app {

struct ClusterKeyParts {
  std::int64_t id = 0;
};

std::string cluster_key(std::int64_t id, std::vector<std::int64_t> face_ids);
// The id of a well-formed key (ID:SIZE:DIGEST, at most 64 bytes); nullopt for anything else.
std::optional<ClusterKeyParts> parse_cluster_key(const std::string& key);

}  // namespace taconite::app
