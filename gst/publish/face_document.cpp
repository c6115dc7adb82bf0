#include "face_document.hpp"

#include <gst/taconite/gsttaconitemeta.h>
#include <gst/taconite/gsttaconiteroi.h>
#include <gst/video/video.h>
#include <json-glib/json-glib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

#include "embedding_status.hpp"
#include "roi_landmarks.hpp"
#include "face_selection.hpp"
#include "json_write.hpp"

namespace taconite::gst {

namespace {

// JSON has no NaN or infinity: a value that is not finite is written as null (docs/faces-message.md;
// json_write.hpp would write it as null too, this keeps the tree honest).
void add_number(JsonBuilder* b, double value) {
  if (std::isfinite(value))
    json_builder_add_double_value(b, value);
  else
    json_builder_add_null_value(b);
}

// ROI param structures that are not an identity even when they carry a `label`.
bool is_identity_candidate(const GstStructure* s) {
  for (const char* other :
       {"detection", "object_id", "landmarks", "landmarks-68", "quality", GST_TACONITE_EMBEDDING_PARAMS_NAME})
    if (gst_structure_has_name(s, other)) return false;
  return gst_structure_get_string(s, "label") != nullptr;
}

// taconiteidentify's answer, DL Streamer style: a ROI param with `label` (string), `label_id` and
// `confidence` (numbers, optional).
void add_identity(JsonBuilder* b, const GstVideoRegionOfInterestMeta* roi) {
  for (GList* l = roi->params; l; l = l->next) {
    const auto* s = static_cast<const GstStructure*>(l->data);
    if (!is_identity_candidate(s)) continue;
    json_builder_set_member_name(b, "label");
    json_builder_add_string_value(b, gst_structure_get_string(s, "label"));
    gint label_id = 0;
    guint label_uid = 0;
    if (gst_structure_get_int(s, "label_id", &label_id)) {
      json_builder_set_member_name(b, "label_id");
      json_builder_add_int_value(b, label_id);
    } else if (gst_structure_get_uint(s, "label_id", &label_uid)) {
      json_builder_set_member_name(b, "label_id");
      json_builder_add_int_value(b, label_uid);
    }
    const GValue* confidence = gst_structure_get_value(s, "confidence");
    if (confidence && (G_VALUE_HOLDS_DOUBLE(confidence) || G_VALUE_HOLDS_FLOAT(confidence))) {
      json_builder_set_member_name(b, "confidence");
      add_number(b, G_VALUE_HOLDS_DOUBLE(confidence) ? g_value_get_double(confidence) : g_value_get_float(confidence));
    }
    return;
  }
}

// Whether the identity is decided (taconiteidentify's label_state); null without identification.
void add_label_state(JsonBuilder* b, const GstVideoRegionOfInterestMeta* roi) {
  const GstTaconiteLabelState state = roi ? gst_taconite_roi_get_label_state(roi) : GST_TACONITE_LABEL_STATE_NONE;
  json_builder_set_member_name(b, "label_state");
  if (state == GST_TACONITE_LABEL_STATE_NONE)
    json_builder_add_null_value(b);
  else
    json_builder_add_string_value(b, gst_taconite_label_state_to_string(state));
}

void add_embedding(JsonBuilder* b, const GstTaconiteEmbeddingMeta* meta, EmbeddingFormat format) {
  if (format == EmbeddingFormat::None || !meta || meta->dim == 0) return;
  json_builder_set_member_name(b, "embedding");
  if (format == EmbeddingFormat::Array) {
    json_builder_begin_array(b);
    // A float32 as the shortest text of its double: up to ~20 bytes a value (base64 takes 5.3).
    for (guint i = 0; i < meta->dim; ++i) add_number(b, meta->embedding[i]);
    json_builder_end_array(b);
    return;
  }
  std::vector<guint8> bytes(sizeof(float) * meta->dim);
  for (guint i = 0; i < meta->dim; ++i) {
    guint32 bits = 0;
    std::memcpy(&bits, &meta->embedding[i], sizeof(bits));
    bits = GUINT32_TO_LE(bits);
    std::memcpy(&bytes[sizeof(float) * i], &bits, sizeof(bits));
  }
  gchar* text = g_base64_encode(bytes.data(), bytes.size());
  json_builder_add_string_value(b, text);
  g_free(text);
}

// A detector's "detection" ROI param (taconitedetect, or any with a `confidence`): its confidence,
// and whether a tracker predicted the box (taconitetrack between detections); null without one.
void add_detection(JsonBuilder* b, const GstVideoRegionOfInterestMeta* roi) {
  json_builder_set_member_name(b, "detection");
  if (!gst_taconite_roi_has_param(roi, "detection")) {
    json_builder_add_null_value(b);
    return;
  }
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "confidence");
  gdouble confidence = 0.0;
  if (gst_taconite_roi_get_detection_confidence(roi, &confidence))
    add_number(b, confidence);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "predicted");
  json_builder_add_boolean_value(b, gst_taconite_roi_is_predicted(roi));
  json_builder_end_object(b);
}

// taconiteadaface's "quality" ROI param: this frame's pre-embedding score and its parts, and the
// attached embedding's score; a field the param lacks (or that is not a finite number) is null.
void add_quality(JsonBuilder* b, const GstVideoRegionOfInterestMeta* roi) {
  json_builder_set_member_name(b, "quality");
  if (!gst_taconite_roi_has_param(roi, "quality")) {
    json_builder_add_null_value(b);
    return;
  }
  json_builder_begin_object(b);
  for (const auto& [field, member] : {std::pair{"score", "score"}, {"size", "size"}, {"pose", "pose"},
                                      {"sharpness", "sharpness"}, {"yaw", "yaw"}, {"pitch", "pitch"},
                                      {"roll", "roll"}, {"embedding-score", "embedding_score"}}) {
    json_builder_set_member_name(b, member);
    double value = 0.0;
    if (gst_taconite_roi_get_quality_field(roi, field, &value))
      add_number(b, value);
    else
      json_builder_add_null_value(b);
  }
  json_builder_end_object(b);
}

void add_nullable_time(JsonBuilder* b, const char* name, GstClockTime t) {
  json_builder_set_member_name(b, name);
  if (GST_CLOCK_TIME_IS_VALID(t))
    json_builder_add_int_value(b, static_cast<gint64>(t));
  else
    json_builder_add_null_value(b);
}

// One face: its box, tracking id, landmarks, detection, quality, identity and embedding. `roi` is null for a
// whole-buffer face (input-mode=crops), whose box is the frame.
void add_face(JsonBuilder* b, const GstVideoRegionOfInterestMeta* roi, const GstTaconiteEmbeddingMeta* meta,
              const FrameContext& context) {
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "roi_id");
  json_builder_add_int_value(b, roi ? roi->id : GST_TACONITE_WHOLE_BUFFER_ROI_ID);
  json_builder_set_member_name(b, "box");
  json_builder_begin_array(b);
  if (roi) {
    for (guint v : {roi->x, roi->y, roi->w, roi->h}) json_builder_add_int_value(b, v);
  } else {
    for (int v : {0, 0, context.width, context.height}) json_builder_add_int_value(b, v);
  }
  json_builder_end_array(b);

  json_builder_set_member_name(b, "track_id");
  if (gint64 id = 0; gst_taconite_roi_get_track_id(roi, &id))
    json_builder_add_int_value(b, id);
  else
    json_builder_add_null_value(b);
  // taconitetrack's uid of the track (the `uid` of its track events); null without one.
  json_builder_set_member_name(b, "track_uid");
  if (const gchar* uid = roi ? gst_taconite_roi_get_track_uid(roi) : nullptr)
    json_builder_add_string_value(b, uid);
  else
    json_builder_add_null_value(b);

  json_builder_set_member_name(b, "landmarks");
  if (const std::vector<Point2> points = roi ? roi_landmarks(roi) : std::vector<Point2>{}; !points.empty()) {
    json_builder_begin_array(b);
    for (const Point2& p : points) {
      json_builder_begin_array(b);
      add_number(b, std::round(p.x * 100.0) / 100.0);  // 0.01 px is plenty
      add_number(b, std::round(p.y * 100.0) / 100.0);
      json_builder_end_array(b);
    }
    json_builder_end_array(b);
  } else {
    json_builder_add_null_value(b);
  }
  add_detection(b, roi);

  // Without an embedding meta (no taconiteadaface upstream, or a ROI it did not select) these
  // are null: the face was found but not embedded.
  json_builder_set_member_name(b, "aligned");
  meta ? json_builder_add_boolean_value(b, meta->aligned) : json_builder_add_null_value(b);
  json_builder_set_member_name(b, "status");
  meta ? json_builder_add_string_value(b, status_name(meta->status)) : json_builder_add_null_value(b);
  json_builder_set_member_name(b, "norm");
  if (meta)
    add_number(b, meta->norm);
  else
    json_builder_add_null_value(b);
  add_quality(b, roi);
  if (roi) add_identity(b, roi);
  add_label_state(b, roi);
  add_embedding(b, meta, context.embedding);
  json_builder_end_object(b);
}

bool roi_is_face(const GstVideoRegionOfInterestMeta* roi, const std::string& roi_type) {
  return roi_type.empty() || roi->roi_type == g_quark_try_string(roi_type.c_str());
}

// The embedding meta of `roi`, one of the buffer's ROI metas `all`. A meta names its ROI by id
// only, and ids need not be unique (facedetect leaves every ROI at 0): when several ROIs share the
// id, the meta goes to the one of them carrying taconiteadaface's "taconite-embedding" param if
// exactly one does, else to none, so a face never shows another face's embedding. The
// whole-buffer id (-1) names no ROI.
const GstTaconiteEmbeddingMeta* roi_embedding(GstBuffer* buffer, const GstVideoRegionOfInterestMeta* roi,
                                              const std::vector<GstVideoRegionOfInterestMeta*>& all) {
  if (roi->id == GST_TACONITE_WHOLE_BUFFER_ROI_ID) return nullptr;
  const auto embedded = [](const GstVideoRegionOfInterestMeta* r) {
    return gst_taconite_roi_has_param(r, GST_TACONITE_EMBEDDING_PARAMS_NAME);
  };
  std::size_t sharing = 0, sharing_embedded = 0;
  for (const GstVideoRegionOfInterestMeta* other : all)
    if (other->id == roi->id) {
      ++sharing;
      sharing_embedded += embedded(other);
    }
  if (sharing > 1 && !(sharing_embedded == 1 && embedded(roi))) return nullptr;
  return gst_buffer_get_taconite_embedding_meta_for_roi(buffer, roi->id);
}

}  // namespace

std::string utc_text(gint64 utc_us) {
  const std::time_t seconds = static_cast<std::time_t>(utc_us / G_USEC_PER_SEC);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[96];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<int>(utc_us % G_USEC_PER_SEC));
  return text;
}

std::optional<std::string> face_document(GstBuffer* buffer, const FrameContext& context, json::Repairs* repairs) {
  const std::vector<GstVideoRegionOfInterestMeta*> all = buffer_rois(buffer);
  std::vector<const GstVideoRegionOfInterestMeta*> rois;
  for (const GstVideoRegionOfInterestMeta* roi : all)
    if (roi_is_face(roi, context.roi_type)) rois.push_back(roi);
  const GstTaconiteEmbeddingMeta* whole = gst_buffer_get_taconite_embedding_meta_for_roi(
      buffer, GST_TACONITE_WHOLE_BUFFER_ROI_ID);
  if (rois.empty() && !whole && !context.publish_empty) return std::nullopt;

  JsonBuilder* b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "schema");
  json_builder_add_string_value(b, kFacesSchema);
  json_builder_set_member_name(b, "stream");
  json_builder_add_string_value(b, context.stream.c_str());
  json_builder_set_member_name(b, "frame");
  json_builder_add_int_value(b, static_cast<gint64>(context.frame));
  add_nullable_time(b, "pts_ns", context.pts);
  add_nullable_time(b, "running_time_ns", context.running_time);
  json_builder_set_member_name(b, "utc");
  json_builder_add_string_value(b, utc_text(context.utc_us).c_str());
  json_builder_set_member_name(b, "width");
  json_builder_add_int_value(b, context.width);
  json_builder_set_member_name(b, "height");
  json_builder_add_int_value(b, context.height);

  // The model names which embeddings are comparable, the backend what computed them (the first
  // embedded face's; one element embeds all faces of a frame with one engine).
  const GstTaconiteEmbeddingMeta* any = gst_buffer_get_taconite_embedding_meta(buffer);
  json_builder_set_member_name(b, "model");
  any ? json_builder_add_string_value(b, any->model) : json_builder_add_null_value(b);
  json_builder_set_member_name(b, "backend");
  any ? json_builder_add_string_value(b, any->backend) : json_builder_add_null_value(b);

  json_builder_set_member_name(b, "faces");
  json_builder_begin_array(b);
  if (whole) add_face(b, nullptr, whole, context);
  for (const GstVideoRegionOfInterestMeta* roi : rois)
    add_face(b, roi, roi_embedding(buffer, roi, all), context);
  json_builder_end_array(b);
  json_builder_end_object(b);

  JsonNode* root = json_builder_get_root(b);
  std::string document = json::write_json(root, repairs);
  json_node_unref(root);
  g_object_unref(b);
  return document;
}

}  // namespace taconite::gst
