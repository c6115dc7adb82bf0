#include "roi_params.hpp"

#include <gst/taconite/gsttaconiteface.h>

#include <set>

#include "face_selection.hpp"

namespace taconite::gst {

GstStructure* points_structure(const char* name, std::span<const vision::Point2> points) {
  std::vector<gdouble> xs, ys;
  for (const vision::Point2& p : points) {
    xs.push_back(p.x);
    ys.push_back(p.y);
  }
  return gst_taconite_points_params_new(name, xs.data(), ys.data(), static_cast<guint>(points.size()));
}

bool set_roi_points(GstVideoRegionOfInterestMeta* roi, const char* name, std::span<const vision::Point2> points) {
  GstStructure* s = points_structure(name, points);
  return s && gst_taconite_roi_replace_param(roi, s);
}

std::optional<double> roi_quality(const GstVideoRegionOfInterestMeta* roi) {
  gdouble value = 0.0;
  if (gst_taconite_roi_get_quality(roi, &value)) return value;
  return std::nullopt;
}

std::vector<gint> unused_roi_ids(GstBuffer* buffer, std::size_t count) {
  std::set<gint> used;
  for (const GstVideoRegionOfInterestMeta* roi : buffer_rois(buffer))
    if (roi->id > 0) used.insert(roi->id);
  std::vector<gint> ids;
  auto next_used = used.begin();
  for (gint candidate = 1; ids.size() < count; ++candidate) {  // at most used.size() + count steps
    while (next_used != used.end() && *next_used < candidate) ++next_used;
    if (next_used == used.end() || *next_used != candidate) ids.push_back(candidate);
  }
  return ids;
}

}  // namespace taconite::gst
