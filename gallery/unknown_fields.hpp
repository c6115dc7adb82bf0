// The checks every unknown face passes before it is stored (GalleryStore::add_unknown_face), and
// the face as stored. Private to the gallery library.
#pragma once

#include <string>

#include "gallery_store.hpp"
#include "identity_fields.hpp"

namespace taconite::gallery {

// A checked unknown face: its unit embedding and norm, the nearest identity's name mended like a
// source, the similarity clamped to [-1, 1]. `face` is the caller's; it must outlive this.
struct StoredUnknownFace {
  const NewUnknownFace& face;
  StoredEmbedding embedding;
  std::string nearest_name;
  double nearest_similarity = 0.0;
};

// Input error naming the gallery `gallery` and the field unless every field of `face` is in range
// (unknown_face.hpp).
Result<StoredUnknownFace> check_unknown_face(const NewUnknownFace& face, int dim, const std::string& gallery);

// Input error naming the gallery unless 1 <= max_count <= kMaxUnknownFaces and max_age_s >= 1.
Status check_retention(const UnknownRetention& keep, const std::string& gallery);

}  // namespace taconite::gallery
