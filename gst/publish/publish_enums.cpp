#include "publish_enums.hpp"

#include "face_document.hpp"

using taconite::gst::EmbeddingFormat;

GType taconite_publish_method_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(PublishMethod::File), "JSON lines to the file 'location' ('-': stdout)", "file"},
      {static_cast<gint>(PublishMethod::Mqtt), "One MQTT message per document to 'host':'port' on 'topic'", "mqtt"},
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
