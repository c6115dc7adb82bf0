#include "cluster_key.hpp"

#include <glib.h>

#include <algorithm>
#include <charconv>

namespace taconite::app {

std::string cluster_key(std::int64_t id, std::vector<std::int64_t> face_ids) {
  std::sort(face_ids.begin(), face_ids.end());
  std::string text;
  for (std::size_t i = 0; i < face_ids.size(); ++i) text += (i ? "," : "") + std::to_string(face_ids[i]);
  gchar* sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text.c_str(), static_cast<gssize>(text.size()));
  const std::string digest(sha256, 8);
  g_free(sha256);
  return std::to_string(id) + ":" + std::to_string(face_ids.size()) + ":" + digest;
}

std::optional<ClusterKeyParts> parse_cluster_key(const std::string& key) {
  if (key.size() > 64) return std::nullopt;
  const std::size_t first = key.find(':');
  const std::size_t second = first == std::string::npos ? first : key.find(':', first + 1);
  if (second == std::string::npos || key.size() - second - 1 != 8) return std::nullopt;
  ClusterKeyParts p;
  auto [ptr, ec] = std::from_chars(key.data(), key.data() + first, p.id);
  if (ec != std::errc() || ptr != key.data() + first || p.id < 1) return std::nullopt;
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (!std::all_of(key.begin() + static_cast<std::ptrdiff_t>(second) + 1, key.end(), hex)) return std::nullopt;
  return p;
}

}  // namespace taconite::app
