// Which faces of a buffer get embedded: the whole buffer (crops) or its face ROIs (rois).
#pragma once

#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>

#include <vector>

#include "enums.hpp"
#include "face_preprocess.hpp"

namespace taconite::gst {

// A face box is vision's (the preprocessing crops around it).
using vision::PixelBox;

struct FaceJob {
  gint roi_id = -1;                              // ROI meta id; -1 for a whole-buffer crop
  PixelBox box;                                  // the face box in frame pixels (may reach outside)
  bool whole_buffer = false;                     // the whole buffer is the face (crops, or auto without ROIs)
  bool aligned_crop = false;                     // crops mode: the whole buffer is aligned by contract
  guint roi_index = 0;                           // position of the ROI among the buffer's ROI metas
  GstVideoRegionOfInterestMeta* roi = nullptr;   // the ROI meta, owned by the buffer it was found on
};

struct SelectionRules {
  InputMode mode = InputMode::Rois;
  GQuark roi_type = 0;      // ROI type to embed (e.g. "face")
  guint min_face_size = 0;  // smaller side of the box, pixels; 0 = no minimum
  guint max_faces = 0;      // keep the largest N; 0 = no limit
};

// Every ROI meta of the buffer, in meta order.
std::vector<GstVideoRegionOfInterestMeta*> buffer_rois(GstBuffer* buffer);

// The ROI's box clipped to the frame (64-bit arithmetic); empty when nothing of it is inside.
PixelBox clipped_roi_box(const GstVideoRegionOfInterestMeta& roi, const GstVideoInfo& info);

// Picks the faces of a buffer without changing it (the buffer may be shared).
std::vector<FaceJob> select_faces(GstBuffer* buffer, const GstVideoInfo& info, const SelectionRules& rules);

// Points the faces chosen by select_faces on (a writable copy of) the same buffer at that
// buffer's ROI metas, and makes each ROI of type `roi_type` (selected or not) the only ROI of the
// buffer before it with its id, so an embedding meta looked up by id names one face: a face ROI
// keeps its id when it is the first ROI meta with that id and not -1 (the whole-buffer id);
// otherwise it gets the next id above the largest on the buffer that no ROI meta uses (wrapping
// to 1 past G_MAXINT).
void claim_face_rois(GstBuffer* writable_buffer, std::vector<FaceJob>& faces, GQuark roi_type);

}  // namespace taconite::gst
