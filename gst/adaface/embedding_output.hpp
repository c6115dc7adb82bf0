// Writes embeddings where applications read them: the own meta, the ROI's params, bus messages.
#pragma once

#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>

#include <optional>
#include <string>
#include <vector>

#include "embedding_status.hpp"
#include "engine_client.hpp"
#include "face_quality.hpp"
#include "face_selection.hpp"

namespace taconite::gst {

struct FaceEmbedding {
  FaceJob face;
  std::vector<float> unit;  // L2-normalised embedding
  double norm = 0.0;        // L2 norm of the raw network output
  bool aligned = false;
  GstTaconiteEmbeddingStatus status = GST_TACONITE_EMBEDDING_COMPUTED;  // SKIPPED: `unit` is empty
  guint cache_age = 0;                                                 // frames since computed (CACHED)
  std::optional<gint64> track_id;  // the ROI's tracking id (track-id-param), when it has a unique one
  std::optional<vision::FaceQuality> quality;  // this frame's face before embedding, when assessed
  double embedding_quality = -1.0;  // the attached embedding's face, its norm folded in (< 0: unknown)
};

// Normalises a raw embedding; returns its L2 norm (0 leaves an all-zero vector). A raw embedding
// holding NaN or an infinity has no direction: nullopt, `unit` left empty.
std::optional<double> l2_normalise(const std::vector<float>& raw, std::vector<float>& unit);

// Adds one GstTaconiteEmbeddingMeta per face and, for ROI faces, a "taconite-embedding" param
// structure on the ROI meta (with the engine's `precision` next to `backend`) and, when the face's
// quality is known, a "quality" param (score, size, pose, sharpness, yaw, pitch, roll,
// embedding-score; docs/gstreamer.md). The buffer must be writable.
void attach_embeddings(GstBuffer* writable_buffer, const std::vector<FaceEmbedding>& faces, const EngineInfo& engine);

// The per-frame element message: timestamps, the backend that ran and its precision, plus a list
// of faces (roi-id, track-id when tracked, box, landmarks when the ROI has some, norm, aligned, status,
// cache-age, quality and embedding-quality when known, embedding as GBytes of little-endian float32).
GstStructure* frame_message_structure(GstBuffer* buffer, const GstSegment& segment, const EngineInfo& engine,
                                      const std::vector<FaceEmbedding>& faces);

}  // namespace taconite::gst
