// Enum property types of taconitepublish, registered with GLib so gst-inspect lists their values.
#pragma once

#include <glib-object.h>

enum class PublishMethod : int {
  File = 0,  // JSON lines to a file or stdout
  Mqtt = 1,  // one MQTT message per document
};

GType taconite_publish_method_get_type();
GType taconite_embedding_format_get_type();  // values of taconite::gst::EmbeddingFormat
