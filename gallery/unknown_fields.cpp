#include "unknown_fields.hpp"

#include <algorithm>
#include <cmath>

namespace taconite::gallery {

namespace {

// 9999-12-31T23:59:59.999Z: a time past it is not a camera's clock but garbage.
constexpr std::int64_t kLatestTimeMs = 253402300799999;
// A similarity of unit vectors computed in float may land this far past +-1: rounding, clamped.
constexpr double kSimilarityRounding = 1e-3;

}  // namespace

Result<StoredUnknownFace> check_unknown_face(const NewUnknownFace& face, int dim, const std::string& gallery) {
  const std::string what = gallery + ": unknown face";
  auto bad = [&](const std::string& why) { return Error{ErrorKind::Input, what + ": " + why}; };
  if (face.jpeg.size() > kMaxUnknownJpegBytes)
    return bad("jpeg of " + std::to_string(face.jpeg.size()) + " bytes, at most " +
               std::to_string(kMaxUnknownJpegBytes));
  // Only a JPEG's start marker is checked here; the library decodes no pictures.
  if (!face.jpeg.empty() && (face.jpeg.size() < 4 || face.jpeg[0] != 0xFF || face.jpeg[1] != 0xD8))
    return bad("jpeg does not start like a JPEG (FF D8)");
  if (Status s = check_name_like("stream name", face.stream); !s) return bad(s.error().message);
  if (face.track_id < -1) return bad("track_id " + std::to_string(face.track_id) + " (must be >= -1; -1: untracked)");
  if (face.first_seen_ms < 0 || face.first_seen_ms > kLatestTimeMs || face.last_seen_ms < 0 ||
      face.last_seen_ms > kLatestTimeMs)
    return bad("first_seen_ms " + std::to_string(face.first_seen_ms) + " / last_seen_ms " +
               std::to_string(face.last_seen_ms) + " not Unix milliseconds in 0.." + std::to_string(kLatestTimeMs));
  if (face.first_seen_ms > face.last_seen_ms)
    return bad("first_seen_ms " + std::to_string(face.first_seen_ms) + " is after last_seen_ms " +
               std::to_string(face.last_seen_ms));
  if (!std::isfinite(face.quality) || face.quality < 0.0)
    return bad("quality " + std::to_string(face.quality) + " (must be finite and >= 0)");
  if (face.nearest_identity < 0)
    return bad("nearest_identity " + std::to_string(face.nearest_identity) + " (must be >= 0; 0: none)");
  if (!std::isfinite(face.nearest_similarity) || std::abs(face.nearest_similarity) > 1.0 + kSimilarityRounding)
    return bad("nearest_similarity " + std::to_string(face.nearest_similarity) + " (must be finite, in [-1, 1])");
  Result<StoredEmbedding> embedding = unit_embedding(face.embedding, face.norm, dim, what + " embedding");
  if (!embedding) return embedding.error();
  return StoredUnknownFace{face, std::move(embedding.value()), printable_source(face.nearest_name),
                           std::clamp(face.nearest_similarity, -1.0, 1.0)};
}

Status check_retention(const UnknownRetention& keep, const std::string& gallery) {
  if (keep.max_count < 1 || keep.max_count > kMaxUnknownFaces)
    return Error{ErrorKind::Input, gallery + ": unknown-face retention max_count " + std::to_string(keep.max_count) +
                                       " out of range 1.." + std::to_string(kMaxUnknownFaces)};
  if (keep.max_age_s < 1)
    return Error{ErrorKind::Input, gallery + ": unknown-face retention max_age_s " + std::to_string(keep.max_age_s) +
                                       " (must be >= 1)"};
  return Ok{};
}

}  // namespace taconite::gallery
