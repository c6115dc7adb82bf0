#include "roi_landmarks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace taconite::gst {

namespace {

// A number field of any numeric GType.
std::optional<double> number(const GValue* v) {
  if (!v) return std::nullopt;
  if (G_VALUE_HOLDS_DOUBLE(v)) return g_value_get_double(v);
  if (G_VALUE_HOLDS_FLOAT(v)) return g_value_get_float(v);
  if (G_VALUE_HOLDS_INT(v)) return g_value_get_int(v);
  if (G_VALUE_HOLDS_UINT(v)) return g_value_get_uint(v);
  if (G_VALUE_HOLDS_INT64(v)) return static_cast<double>(g_value_get_int64(v));
  if (G_VALUE_HOLDS_UINT64(v)) return static_cast<double>(g_value_get_uint64(v));
  return std::nullopt;
}

// The numbers of an array or list field; empty when it is neither or holds a non-number.
std::vector<double> numbers(const GstStructure* s, const char* field) {
  const GValue* v = gst_structure_get_value(s, field);
  std::vector<double> out;
  if (!v) return out;
  if (GST_VALUE_HOLDS_ARRAY(v)) {
    for (guint i = 0; i < gst_value_array_get_size(v); ++i) {
      auto n = number(gst_value_array_get_value(v, i));
      if (!n) return {};
      out.push_back(*n);
    }
  } else if (GST_VALUE_HOLDS_LIST(v)) {
    for (guint i = 0; i < gst_value_list_get_size(v); ++i) {
      auto n = number(gst_value_list_get_value(v, i));
      if (!n) return {};
      out.push_back(*n);
    }
  }
  return out;
}

// DL Streamer's data_buffer: a GVariant byte array of little-endian float32.
std::vector<double> variant_floats(const GstStructure* s, const char* field) {
  const GValue* v = gst_structure_get_value(s, field);
  std::vector<double> out;
  if (!v || !G_VALUE_HOLDS_VARIANT(v)) return out;
  GVariant* variant = g_value_get_variant(v);
  if (!variant || !g_variant_is_of_type(variant, G_VARIANT_TYPE_BYTESTRING)) return out;
  gsize size = 0;
  const auto* bytes = static_cast<const std::uint8_t*>(g_variant_get_fixed_array(variant, &size, 1));
  for (gsize i = 0; i + 4 <= size; i += 4) {
    guint32 le = 0;
    std::memcpy(&le, bytes + i, 4);
    le = GUINT32_FROM_LE(le);
    float f = 0.0f;
    std::memcpy(&f, &le, 4);
    out.push_back(f);
  }
  return out;
}

bool usable_count(std::size_t n) { return n == 2 || n == 5; }

Point2 from_roi_fraction(const GstVideoRegionOfInterestMeta* roi, double fx, double fy) {
  return {roi->x + fx * roi->w, roi->y + fy * roi->h};
}

std::vector<Point2> landmarks_structure(const GstVideoRegionOfInterestMeta* roi, const GstStructure* s) {
  const std::vector<double> xs = numbers(s, "x"), ys = numbers(s, "y");
  if (xs.size() != ys.size() || !usable_count(xs.size())) return {};
  gboolean normalized = FALSE;
  gst_structure_get_boolean(s, "normalized", &normalized);
  std::vector<Point2> out;
  for (std::size_t i = 0; i < xs.size(); ++i) out.push_back(normalized ? from_roi_fraction(roi, xs[i], ys[i]) : Point2{xs[i], ys[i]});
  return out;
}

std::vector<Point2> dlstreamer_points(const GstVideoRegionOfInterestMeta* roi, const GstStructure* s) {
  const gchar* format = gst_structure_get_string(s, "format");
  if (!format || std::string(format) != "landmark_points") return {};
  std::vector<double> values = numbers(s, "data");
  if (values.empty()) values = variant_floats(s, "data_buffer");
  if (values.size() % 2 != 0 || !usable_count(values.size() / 2)) return {};
  std::vector<Point2> out;
  for (std::size_t i = 0; i < values.size(); i += 2) out.push_back(from_roi_fraction(roi, values[i], values[i + 1]));
  return out;
}

std::vector<Point2> facedetect_eyes(const GstStructure* s) {
  auto x = number(gst_structure_get_value(s, "eyes->x")), y = number(gst_structure_get_value(s, "eyes->y"));
  auto w = number(gst_structure_get_value(s, "eyes->width")), h = number(gst_structure_get_value(s, "eyes->height"));
  if (!x || !y || !w || !h || *w <= 0) return {};
  return {{*x + 0.25 * *w, *y + 0.5 * *h}, {*x + 0.75 * *w, *y + 0.5 * *h}};
}

}  // namespace

std::vector<Point2> roi_landmarks(const GstVideoRegionOfInterestMeta* roi) {
  if (!roi) return {};
  for (GList* l = roi->params; l; l = l->next) {
    const auto* s = static_cast<const GstStructure*>(l->data);
    if (gst_structure_has_name(s, "landmarks"))
      if (auto points = landmarks_structure(roi, s); !points.empty()) return points;
    if (auto points = dlstreamer_points(roi, s); !points.empty()) return points;
    if (auto points = facedetect_eyes(s); !points.empty()) return points;
  }
  return {};
}

std::optional<cv::Matx23d> roi_alignment(const GstVideoRegionOfInterestMeta* roi, int frame_width, int frame_height,
                                         int width, int height, std::string* rejected) {
  const std::vector<Point2> landmarks = roi_landmarks(roi);
  if (landmarks.empty()) return std::nullopt;
  Result<cv::Matx23d> checked = vision::checked_alignment(landmarks, frame_width, frame_height, width, height);
  if (checked) return checked.value();
  *rejected = checked.error().message;
  return std::nullopt;
}

}  // namespace taconite::gst
