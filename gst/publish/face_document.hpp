// The JSON document taconitepublish sends for one frame (schema "taconite-faces/1",
// docs/faces-message.md): the frame's identity and timing plus one object per face, read from the
// buffer's ROI metas (box, taconitetrack's object_id, landmarks, taconiteidentify's label) and
// taconiteadaface's embedding metas. Built as a json-glib tree, written by json_write.hpp.
#pragma once

#include <gst/gst.h>

#include <optional>
#include <string>

namespace taconite::json {
struct Repairs;
}

namespace taconite::gst {

inline constexpr const char* kFacesSchema = "taconite-faces/1";

enum class EmbeddingFormat : int {
  None = 0,    // no embedding in the document
  Base64 = 1,  // little-endian float32 values, base64
  Array = 2,   // a JSON array of numbers
};

struct FrameContext {
  std::string stream;              // "stream" of the document
  guint64 frame = 0;               // buffers this element saw in the stream before this one
  GstClockTime pts = GST_CLOCK_TIME_NONE;
  GstClockTime running_time = GST_CLOCK_TIME_NONE;
  gint64 utc_us = 0;               // wall clock, microseconds since the Unix epoch
  int width = 0, height = 0;       // frame size from the caps; 0 when unknown
  std::string roi_type = "face";   // ROI metas of this type are faces; empty: every ROI
  EmbeddingFormat embedding = EmbeddingFormat::None;
  bool publish_empty = false;      // also a document for a frame without faces
};

// ISO 8601 UTC with microseconds, e.g. 2026-12-01T02:35:12.345678Z (the documents' "utc").
std::string utc_text(gint64 utc_us);

// The frame's document as one line of JSON (no newline), or nothing when the frame has no faces
// and `publish_empty` is false. Reads the buffer only. Valid JSON whatever the metas hold: a string
// that is not UTF-8 (a label an upstream element set, the stream name) is written with U+FFFD and
// counted in `repairs` when given.
std::optional<std::string> face_document(GstBuffer* buffer, const FrameContext& context,
                                         json::Repairs* repairs = nullptr);

}  // namespace taconite::gst
