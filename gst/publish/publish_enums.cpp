#include "publish_enums.hpp"

#include "best_face_writer.hpp"
#include "face_document.hpp"

using taconite::gst::BestFaceOutput;
using taconite::gst::EmbeddingFormat;

GType taconite_publish_method_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(PublishMethod::File), "JSON lines to the file 'location' ('-': stdout)", "file"},
      {static_cast<gint>(PublishMethod::Mqtt), "One MQTT message per document to 'host':'port' on 'topic'", "mqtt"},
      {static_cast<gint>(PublishMethod::Bus),
       "One element message taconite-publish (kind, stream, document) per document on the bus", "bus"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconitePublishMethod", values));
  return static_cast<GType>(type);
}

GType taconite_embedding_format_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(EmbeddingFormat::None), "No embedding in the document", "none"},
      {static_cast<gint>(EmbeddingFormat::Base64), "The embedding as base64 of little-endian float32 values", "base64"},
      {static_cast<gint>(EmbeddingFormat::Array), "The embedding as a JSON array of numbers", "array"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstTaconitePublishEmbedding", values));
  return static_cast<GType>(type);
}

GType taconite_publish_messages_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(PublishMessages::Frames), "One taconite-faces/1 document per frame with faces", "frames"},
      {static_cast<gint>(PublishMessages::Tracks), "taconite-tracks/1 events: a track's new, update and end", "tracks"},
      {static_cast<gint>(PublishMessages::Both), "Frame documents and track events", "both"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstTaconitePublishMessages", values));
  return static_cast<GType>(type);
}

GType taconite_best_face_output_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(BestFaceOutput::None), "No best face in the track events", "none"},
      {static_cast<gint>(BestFaceOutput::Path), "A JPEG file per track in best-face-dir, its path in the events",
       "path"},
      {static_cast<gint>(BestFaceOutput::Base64), "The JPEG inline in the events, base64", "base64"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstTaconitePublishBestFace", values));
  return static_cast<GType>(type);
}
