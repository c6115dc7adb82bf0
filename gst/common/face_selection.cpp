#include "face_selection.hpp"

#include <algorithm>
#include <unordered_set>

namespace taconite::gst {

std::vector<GstVideoRegionOfInterestMeta*> buffer_rois(GstBuffer* buffer) {
  std::vector<GstVideoRegionOfInterestMeta*> rois;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    rois.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta));
  return rois;
}

PixelBox clipped_roi_box(const GstVideoRegionOfInterestMeta& roi, const GstVideoInfo& info) {
  const long x0 = std::clamp<gint64>(roi.x, 0, GST_VIDEO_INFO_WIDTH(&info));
  const long y0 = std::clamp<gint64>(roi.y, 0, GST_VIDEO_INFO_HEIGHT(&info));
  const long x1 = std::clamp<gint64>(static_cast<gint64>(roi.x) + roi.w, 0, GST_VIDEO_INFO_WIDTH(&info));
  const long y1 = std::clamp<gint64>(static_cast<gint64>(roi.y) + roi.h, 0, GST_VIDEO_INFO_HEIGHT(&info));
  return {static_cast<int>(x0), static_cast<int>(y0), static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)};
}

namespace {

std::vector<FaceJob> roi_faces(GstBuffer* buffer, const GstVideoInfo& info, const SelectionRules& rules) {
  std::vector<FaceJob> faces;
  const std::vector<GstVideoRegionOfInterestMeta*> rois = buffer_rois(buffer);
  for (guint index = 0; index < rois.size(); ++index) {
    GstVideoRegionOfInterestMeta* roi = rois[index];
    if (roi->roi_type != rules.roi_type) continue;
    if (rules.min_face_size > 0 && std::min(roi->w, roi->h) < rules.min_face_size) continue;
    const PixelBox inside = clipped_roi_box(*roi, info);
    if (inside.width <= 0 || inside.height <= 0) continue;
    // x and y are inside the frame here; a side beyond G_MAXINT covers any frame anyway.
    const auto side = [](guint v) { return static_cast<int>(std::min<guint>(v, G_MAXINT)); };
    FaceJob face;
    face.roi_id = roi->id;
    face.box = {static_cast<int>(roi->x), static_cast<int>(roi->y), side(roi->w), side(roi->h)};
    face.roi_index = index;
    face.roi = roi;
    faces.push_back(face);
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

bool has_roi_of_type(GstBuffer* buffer, GQuark type) {
  for (GstVideoRegionOfInterestMeta* roi : buffer_rois(buffer))
    if (roi->roi_type == type) return true;
  return false;
}

}  // namespace

std::vector<FaceJob> select_faces(GstBuffer* buffer, const GstVideoInfo& info, const SelectionRules& rules) {
  if (rules.mode == InputMode::Rois || (rules.mode == InputMode::Auto && has_roi_of_type(buffer, rules.roi_type)))
    return roi_faces(buffer, info, rules);
  FaceJob whole;
  whole.roi_id = GST_TACONITE_WHOLE_BUFFER_ROI_ID;
  whole.box = {0, 0, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info)};
  whole.whole_buffer = true;
  whole.aligned_crop = rules.mode == InputMode::Crops;  // auto's fallback is a frame, not a face crop
  return {whole};
}

void claim_face_rois(GstBuffer* writable_buffer, std::vector<FaceJob>& faces, GQuark roi_type) {
  const std::vector<GstVideoRegionOfInterestMeta*> rois = buffer_rois(writable_buffer);
  std::unordered_set<gint> used;
  std::vector<bool> first_with_its_id(rois.size());
  gint64 largest = 0;
  for (std::size_t i = 0; i < rois.size(); ++i) {
    first_with_its_id[i] = used.insert(rois[i]->id).second;
    largest = std::max<gint64>(largest, rois[i]->id);
  }
  gint64 next = largest;
  // Every face ROI, embedded or not: a face left sharing the id of an embedded one would be given
  // its embedding by whoever looks embeddings up by id (taconitepublish, taconiteidentify).
  for (std::size_t i = 0; i < rois.size(); ++i) {
    GstVideoRegionOfInterestMeta* roi = rois[i];
    if (roi->roi_type != roi_type) continue;
    if (first_with_its_id[i] && roi->id != GST_TACONITE_WHOLE_BUFFER_ROI_ID) continue;
    // At most rois.size() ids are in use, so this finds a free one within rois.size() + 1 steps.
    do {
      next = next >= G_MAXINT ? 1 : next + 1;
    } while (used.count(static_cast<gint>(next)));
    roi->id = static_cast<gint>(next);
    used.insert(roi->id);
  }
  for (FaceJob& face : faces) {
    if (face.whole_buffer) continue;
    face.roi = face.roi_index < rois.size() ? rois[face.roi_index] : nullptr;  // a copy lost the meta
    if (face.roi) face.roi_id = face.roi->id;
  }
}

}  // namespace taconite::gst
