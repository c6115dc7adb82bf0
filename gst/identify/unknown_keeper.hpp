// taconiteidentify keep-unknowns, the element's side: reads each tracked face's quality
// (taconiteadaface's "quality" param in best-shot mode, else the embedding's norm) and nearest
// gallery match into the per-track bookkeeping (unknown_tracks.hpp); crops the faces that became
// their track's best (best_face_crop.hpp: the frame mapped read-only only then, aligned 112x112
// with the ROI's landmarks); hands the tracks that ended unknown to the writer
// (unknown_face_writer.hpp). A frame that cannot be read (not in system memory, a format the face
// front end does not read) or a face without landmarks keeps its embedding without a picture.
// Streaming thread only, but stop().
#pragma once

#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gallery_index.hpp"
#include "best_faces.hpp"
#include "identity_votes.hpp"
#include "unknown_face_writer.hpp"
#include "unknown_tracks.hpp"

namespace taconite::gst {

class UnknownKeeper {
 public:
  // How long stop() waits for the queued faces to be written before it drops the rest.
  static constexpr unsigned kDrainMs = 5000;

  // `model`: the model of the gallery searched (UnknownFaceWriter).
  UnknownKeeper(std::string gallery, gallery::ModelFingerprint model, gallery::UnknownRetention keep,
                std::shared_ptr<UnknownCounters> counters, UnknownFaceWriter::Report report)
      : writer_(std::move(gallery), std::move(model), keep, std::move(counters), report), report_(std::move(report)) {}

  // The negotiated caps: pictures are cropped only from system-memory frames they describe.
  void set_caps(GstCaps* caps);
  // A new buffer, frame `now` of the stream: the tracks unseen for more than `timeout` frames end.
  void begin_buffer(std::uint64_t now, unsigned timeout, const std::string& stream);
  // A tracked face of this buffer, its track decided `verdict`. `embedding`: its newly computed
  // embedding, searched this buffer with `candidates` as the answer (null: nothing new, e.g. a
  // reused embedding).
  void face(std::int64_t track, std::uint64_t now, std::int64_t utc_ms, TrackVerdict verdict,
            GstVideoRegionOfInterestMeta* roi, const GstTaconiteEmbeddingMeta* embedding,
            const std::vector<vision::IdentityCandidate>& candidates);
  // After the buffer's faces: crops the better faces from `buffer`.
  void end_buffer(GstBuffer* buffer);
  // taconitetrack ended these tracks: the unknown ones go to the writer now.
  void end_tracks(std::span<const std::int64_t> ids, const std::string& stream);
  // Every track ends (end of stream, flush, a new stream).
  void end_all(const std::string& stream);
  // Every track ends; waits up to kDrainMs for the writer (its thread is joined by the destructor).
  void stop(const std::string& stream);

 private:
  void hand_over(std::vector<EndedUnknown> ended, const std::string& stream);

  UnknownTracks tracks_;
  UnknownFaceWriter writer_;
  UnknownFaceWriter::Report report_;
  std::optional<GstVideoInfo> info_;  // none: frames not readable (caps unknown or not system memory)
  bool warned_unreadable_ = false;
  std::vector<ImprovedFace> improved_;  // this buffer's faces that became their track's best
};

}  // namespace taconite::gst
