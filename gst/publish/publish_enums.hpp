// Enum property types of taconitepublish, registered with GLib so gst-inspect lists their values.
#pragma once

#include <glib-object.h>

enum class PublishMethod : int {
  File = 0,  // JSON lines to a file or stdout
  Mqtt = 1,  // one MQTT message per document
  Bus = 2,   // one element message per document on the pipeline's bus (taconite-run)
};

// What taconitepublish sends: per-frame documents, per-track events, or both.
enum class PublishMessages : int {
  Frames = 0,
  Tracks = 1,
  Both = 2,
};

GType taconite_publish_method_get_type();
GType taconite_publish_messages_get_type();
GType taconite_best_face_output_get_type();  // values of taconite::gst::BestFaceOutput
GType taconite_embedding_format_get_type();  // values of taconite::gst::EmbeddingFormat
