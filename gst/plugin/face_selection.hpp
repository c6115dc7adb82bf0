// Which faces of a buffer get embedded: the whole buffer (crops) or its face ROIs (rois).
#pragma once

#include <gst/video/video.h>

#include <vector>

#include "enums.hpp"

namespace taconite::gst {

struct PixelBox {
  int x = 0, y = 0, width = 0, height = 0;
};

struct FaceJob {
  gint roi_id = -1;                              // ROI meta id; -1 for a whole-buffer crop
  PixelBox box;                                  // the face box in frame pixels (may reach outside)
  bool whole_buffer = false;                     // crops mode: embed the whole buffer as it is
  GstVideoRegionOfInterestMeta* roi = nullptr;   // the ROI meta (rois mode), owned by the buffer
};

struct SelectionRules {
  InputMode mode = InputMode::Auto;
  GQuark roi_type = 0;      // ROI type to embed (e.g. "face")
  guint min_face_size = 0;  // smaller side of the box, pixels; 0 = no minimum
  guint max_faces = 0;      // keep the largest N; 0 = no limit
};

// Picks the faces of a writable buffer. Gives every ROI of the wanted type whose id is 0 a
// unique id (above every id already on the buffer) so embeddings can name their ROI.
std::vector<FaceJob> select_faces(GstBuffer* writable_buffer, const GstVideoInfo& info, const SelectionRules& rules);

}  // namespace taconite::gst
