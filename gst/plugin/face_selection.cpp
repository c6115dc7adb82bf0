#include "face_selection.hpp"

#include <algorithm>

namespace taconite::gst {

namespace {

std::vector<GstVideoRegionOfInterestMeta*> rois_of_type(GstBuffer* buffer, GQuark type) {
  std::vector<GstVideoRegionOfInterestMeta*> rois;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    if (roi->roi_type == type) rois.push_back(roi);
  }
  return rois;
}

gint max_roi_id(GstBuffer* buffer) {
  gint max_id = 0;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    max_id = std::max(max_id, reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta)->id);
  return max_id;
}

// The ROI box clipped to the frame; empty when nothing of it is inside.
PixelBox clipped_box(const GstVideoRegionOfInterestMeta& roi, const GstVideoInfo& info) {
  const long x0 = std::clamp<long>(roi.x, 0, GST_VIDEO_INFO_WIDTH(&info));
  const long y0 = std::clamp<long>(roi.y, 0, GST_VIDEO_INFO_HEIGHT(&info));
  const long x1 = std::clamp<long>(static_cast<long>(roi.x) + roi.w, 0, GST_VIDEO_INFO_WIDTH(&info));
  const long y1 = std::clamp<long>(static_cast<long>(roi.y) + roi.h, 0, GST_VIDEO_INFO_HEIGHT(&info));
  return {static_cast<int>(x0), static_cast<int>(y0), static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)};
}

std::vector<FaceJob> roi_faces(const std::vector<GstVideoRegionOfInterestMeta*>& rois, const GstVideoInfo& info,
                               const SelectionRules& rules) {
  std::vector<FaceJob> faces;
  for (GstVideoRegionOfInterestMeta* roi : rois) {
    if (rules.min_face_size > 0 && std::min(roi->w, roi->h) < rules.min_face_size) continue;
    const PixelBox inside = clipped_box(*roi, info);
    if (inside.width <= 0 || inside.height <= 0) continue;
    const PixelBox box{static_cast<int>(roi->x), static_cast<int>(roi->y), static_cast<int>(roi->w),
                       static_cast<int>(roi->h)};
    faces.push_back({roi->id, box, false, roi});
  }
  if (rules.max_faces > 0 && faces.size() > rules.max_faces) {
    // Keep the largest faces, then restore the ROI order so output order follows the metas.
    std::vector<std::size_t> order(faces.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto area = [&](std::size_t i) { return static_cast<long>(faces[i].roi->w) * faces[i].roi->h; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return area(a) > area(b); });
    order.resize(rules.max_faces);
    std::sort(order.begin(), order.end());
    std::vector<FaceJob> kept;
    for (std::size_t i : order) kept.push_back(faces[i]);
    faces = std::move(kept);
  }
  return faces;
}

}  // namespace

std::vector<FaceJob> select_faces(GstBuffer* writable_buffer, const GstVideoInfo& info, const SelectionRules& rules) {
  if (rules.mode != InputMode::Crops) {
    std::vector<GstVideoRegionOfInterestMeta*> rois = rois_of_type(writable_buffer, rules.roi_type);
    if (rules.mode == InputMode::Rois || !rois.empty()) {
      gint next_id = max_roi_id(writable_buffer);
      for (GstVideoRegionOfInterestMeta* roi : rois)
        if (roi->id == 0) roi->id = ++next_id;
      return roi_faces(rois, info, rules);
    }
  }
  FaceJob whole;
  whole.roi_id = -1;
  whole.box = {0, 0, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info)};
  whole.whole_buffer = true;
  return {whole};
}

}  // namespace taconite::gst
