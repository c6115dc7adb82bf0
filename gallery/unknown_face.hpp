// Unknown faces kept for review (issue 24): per track that ended unknown, taconiteidentify keeps
// its best face (the aligned crop as JPEG, the embedding, where and when, the nearest known
// identity) in the gallery's table `unknown_faces`; `taconite-gallery unknowns` clusters them,
// `name` enrols a cluster as an identity, `forget` deletes it. The calls are GalleryStore's
// (gallery_store.hpp); these are their values and bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace taconite::gallery {

// A kept unknown face's JPEG is at most this big (an aligned 112x112 crop is ~5 KB at quality 90).
inline constexpr std::size_t kMaxUnknownJpegBytes = 256 * 1024;
// The most unknown faces a gallery keeps (UnknownRetention::max_count) and a reader reads: bounds
// what clustering holds in memory (100 k faces of 512 values are 200 MB of embeddings).
inline constexpr std::size_t kMaxUnknownFaces = 100000;

// One track that ended unknown, as taconiteidentify keeps it for review.
struct NewUnknownFace {
  std::vector<float> embedding;     // raw or unit, finite, not zero, the gallery's size; stored
                                    // L2-normalised (like templates), with its norm
  double norm = 0.0;                // 0: the L2 norm of `embedding`; else finite and positive
  std::vector<unsigned char> jpeg;  // the aligned 112x112 crop, JPEG; may be empty (no pixels
                                    // were readable); at most kMaxUnknownJpegBytes
  std::string stream;               // the camera (taconiteidentify's `stream`), checked like a name
  std::int64_t track_id = -1;       // -1: untracked
  std::int64_t first_seen_ms = 0;   // Unix time in ms (UTC) of the track's first and last frame
  std::int64_t last_seen_ms = 0;    //   (first <= last)
  double quality = 0.0;             // the best face's quality (finite, >= 0)
  std::int64_t nearest_identity = 0;  // the closest gallery identity; 0: the gallery was empty
  std::string nearest_name;           //   its name ("" when none); stored mended like a source
  double nearest_similarity = 0.0;    //   cosine similarity to it (finite, in [-1, 1])
};

struct UnknownFaceRow {
  std::int64_t id = 0;               // never given again (like template ids)
  std::vector<float> embedding;      // unit length; empty when read without embeddings
  double norm = 0.0;
  std::vector<unsigned char> jpeg;   // empty when read without pictures (or none was kept)
  std::string stream;
  std::int64_t track_id = -1;
  std::int64_t first_seen_ms = 0, last_seen_ms = 0;
  double quality = 0.0;
  std::int64_t nearest_identity = 0;
  std::string nearest_name;
  double nearest_similarity = 0.0;
  std::int64_t created_unix = 0;     // when it was stored
};

// How many unknown faces a gallery keeps: after each add, the oldest beyond `max_count` and every
// face stored more than `max_age_s` seconds ago are deleted (same transaction).
struct UnknownRetention {
  std::size_t max_count = 10000;                // 1..kMaxUnknownFaces
  std::int64_t max_age_s = 30 * 24 * 3600;      // >= 1
};

}  // namespace taconite::gallery
