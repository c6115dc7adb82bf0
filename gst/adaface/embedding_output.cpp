#include "embedding_output.hpp"

#include <gst/taconite/gsttaconiteface.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>

#include <cmath>
#include <vector>

#include "roi_landmarks.hpp"

namespace taconite::gst {

namespace {

// The "quality" ROI param: this frame's pre-embedding score and its parts (angles with 5
// landmarks only), and the quality of the embedding attached, when known.
void write_quality(GstVideoRegionOfInterestMeta* roi, const FaceEmbedding& face) {
  std::vector<const gchar*> fields;
  std::vector<gdouble> values;
  const auto add = [&](const gchar* field, double value) {
    if (!std::isfinite(value)) return;  // the library refuses it; readers read it as absent anyway
    fields.push_back(field);
    values.push_back(value);
  };
  if (const auto& q = face.quality) {
    add("score", q->score);
    add("size", q->size);
    add("pose", q->pose);
    add("sharpness", q->sharpness);
    if (q->angles) {
      add("yaw", q->angles->yaw);
      add("pitch", q->angles->pitch);
      add("roll", q->angles->roll);
    }
  }
  if (face.embedding_quality >= 0.0) add("embedding-score", face.embedding_quality);
  gst_taconite_roi_set_quality(roi, fields.data(), values.data(), static_cast<guint>(fields.size()));
}

}  // namespace

std::optional<double> l2_normalise(const std::vector<float>& raw, std::vector<float>& unit) {
  unit.clear();
  double sum = 0.0;  // finite floats squared cannot overflow a double, even summed
  for (float v : raw) {
    if (!std::isfinite(v)) return std::nullopt;  // Inf / Inf would write NaN
    sum += static_cast<double>(v) * v;
  }
  const double norm = std::sqrt(sum);
  unit.resize(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) unit[i] = norm > 0.0 ? static_cast<float>(raw[i] / norm) : 0.0f;
  return norm;
}

void attach_embeddings(GstBuffer* writable_buffer, const std::vector<FaceEmbedding>& faces, const EngineInfo& engine) {
  const std::string& model = engine.model;
  const std::string& backend = engine.backend;
  for (const FaceEmbedding& face : faces) {
    const guint dim = static_cast<guint>(face.unit.size());
    GstTaconiteEmbeddingMeta* meta = gst_buffer_add_taconite_embedding_meta(
        writable_buffer, face.face.roi_id, face.unit.data(), dim, face.norm, model.c_str(), backend.c_str(),
        face.aligned);
    if (meta) {
      meta->status = face.status;
      meta->cache_age = face.cache_age;
      meta->precision = g_strdup(engine.precision.c_str());
    }
    if (face.face.roi) {
      GstStructure* params = gst_taconite_embedding_params_new(face.unit.data(), dim, face.norm, model.c_str(),
                                                               backend.c_str(), face.aligned);
      gst_structure_set(params, "precision", G_TYPE_STRING, engine.precision.c_str(), "status", G_TYPE_STRING,
                        status_name(face.status), "cache-age", G_TYPE_UINT, face.cache_age, nullptr);
      gst_video_region_of_interest_meta_add_param(face.face.roi, params);
      if (face.quality || face.embedding_quality >= 0.0) write_quality(face.face.roi, face);
    }
  }
}

namespace {

GstStructure* face_structure(const FaceEmbedding& face) {
  GstStructure* params = gst_taconite_embedding_params_new(face.unit.data(), static_cast<guint>(face.unit.size()),
                                                           face.norm, "", "", face.aligned);
  const GValue* embedding = gst_structure_get_value(params, "embedding");
  GstStructure* s = gst_structure_new("face", "roi-id", G_TYPE_INT, face.face.roi_id, "x", G_TYPE_INT, face.face.box.x,
                                      "y", G_TYPE_INT, face.face.box.y, "width", G_TYPE_INT, face.face.box.width,
                                      "height", G_TYPE_INT, face.face.box.height, "norm", G_TYPE_DOUBLE, face.norm,
                                      "aligned", G_TYPE_BOOLEAN, face.aligned, "status", G_TYPE_STRING,
                                      status_name(face.status), "cache-age", G_TYPE_UINT, face.cache_age, nullptr);
  if (face.track_id) gst_structure_set(s, "track-id", G_TYPE_INT64, *face.track_id, nullptr);
  if (face.quality) gst_structure_set(s, "quality", G_TYPE_DOUBLE, face.quality->score, nullptr);
  if (face.embedding_quality >= 0.0)
    gst_structure_set(s, "embedding-quality", G_TYPE_DOUBLE, face.embedding_quality, nullptr);
  // The landmarks the ROI carried (frame pixels, x0 y0 x1 y1 ...), for applications and logs.
  if (const std::vector<Point2> points = face.face.roi ? roi_landmarks(face.face.roi) : std::vector<Point2>{};
      !points.empty()) {
    GValue array = G_VALUE_INIT;
    gst_value_array_init(&array, static_cast<guint>(2 * points.size()));
    for (const Point2& p : points)
      for (double v : {p.x, p.y}) {
        GValue item = G_VALUE_INIT;
        g_value_init(&item, G_TYPE_DOUBLE);
        g_value_set_double(&item, v);
        gst_value_array_append_and_take_value(&array, &item);
      }
    gst_structure_take_value(s, "landmarks", &array);
  }
  gst_structure_set_value(s, "embedding", embedding);
  gst_structure_free(params);
  return s;
}

}  // namespace

GstStructure* frame_message_structure(GstBuffer* buffer, const GstSegment& segment, const EngineInfo& engine,
                                      const std::vector<FaceEmbedding>& faces) {
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  GstClockTime running_time = GST_CLOCK_TIME_NONE, stream_time = GST_CLOCK_TIME_NONE;
  if (segment.format == GST_FORMAT_TIME && GST_CLOCK_TIME_IS_VALID(pts)) {
    running_time = gst_segment_to_running_time(&segment, GST_FORMAT_TIME, pts);
    stream_time = gst_segment_to_stream_time(&segment, GST_FORMAT_TIME, pts);
  }
  GValue list = G_VALUE_INIT;
  gst_value_list_init(&list, static_cast<guint>(faces.size()));
  for (const FaceEmbedding& face : faces) {
    GValue item = G_VALUE_INIT;
    g_value_init(&item, GST_TYPE_STRUCTURE);
    g_value_take_boxed(&item, face_structure(face));
    gst_value_list_append_and_take_value(&list, &item);
  }
  GstStructure* s = gst_structure_new("taconiteadaface", "timestamp", G_TYPE_UINT64, pts, "stream-time", G_TYPE_UINT64,
                                      stream_time, "running-time", G_TYPE_UINT64, running_time, "duration",
                                      G_TYPE_UINT64, GST_BUFFER_DURATION(buffer), "backend", G_TYPE_STRING,
                                      engine.backend.c_str(), "precision", G_TYPE_STRING, engine.precision.c_str(),
                                      nullptr);
  gst_structure_take_value(s, "faces", &list);
  return s;
}

}  // namespace taconite::gst
