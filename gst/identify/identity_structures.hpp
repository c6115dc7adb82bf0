// What taconiteidentify writes for applications (docs/gstreamer.md): the `identity` (the face
// contract's, gst/taconite/gsttaconiteface.h) and `taconite-identity` ROI params of a face and the
// `taconite-identity` element message.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <optional>
#include <string>
#include <vector>

#include "identity_votes.hpp"

namespace taconite::gst {

// Writes the ROI's `identity` param with the metadata library's setters: label_state "pending" while
// the track votes (`decided` null, no label), else the decided label, label_id (-1: unknown) and
// confidence. False, the param unchanged, when the library refuses the answer (a NaN confidence).
bool set_roi_identity(GstVideoRegionOfInterestMeta* roi, const vision::IdentityVote* decided);

// The `taconite-identity` param: this frame's best match (`similarity`) and `candidates`, the track's
// decision and votes, its track id (when tracked) and the gallery revision searched.
GstStructure* taconite_param(const std::vector<vision::IdentityCandidate>& candidates,
                             const vision::TrackDecision& decision, double similarity, std::optional<gint64> track,
                             std::int64_t revision);

// The `taconite-identity` message of a track first decided on `who`; `utc` is now.
GstStructure* identity_message(const std::string& stream, const std::string& stream_id, gint64 track,
                               const vision::IdentityVote& who, GstClockTime running_time);

}  // namespace taconite::gst
