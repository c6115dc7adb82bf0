// taconitepublish messages=tracks|both: reads each frame's tracked faces (taconitetrack's object_id,
// taconiteidentify's identity, taconiteadaface's quality and the landmarks), keeps the track book
// and hands better faces, aligned to 112x112 from the frame mapped read-only (gst/common's
// best_face_crop.hpp), to the best-face writer. A better face that the writer's full queue would
// refuse is counted dropped before any work (no mapping, no alignment). Gives the events as JSON
// lines (track_event_document.hpp).
#pragma once

#include <gst/video/video.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "best_face_writer.hpp"
#include "json_write.hpp"
#include "track_book.hpp"

namespace taconite::gst {

inline constexpr unsigned kBestFaceDrainMs = 2000;

struct TrackEventsSettings {
  std::string stream;
  std::string roi_type = "face";
  std::uint64_t timeout_frames = 30;
  std::size_t max_tracks = 256;
  BestFaceWriterSettings best_face;  // output None: no best faces
};

class TrackEvents {
 public:
  // The best-face writer's error (naming the directory) when it cannot start. `report`: the
  // writer's failure and recovery messages (its thread).
  static Result<std::unique_ptr<TrackEvents>> start(const TrackEventsSettings& settings,
                                                    BestFaceWriter::Report report = nullptr);

  // The frame's events. `info`: the caps (null when unknown: no best faces).
  std::vector<std::string> frame(GstBuffer* buffer, const GstVideoInfo* info, const EventTime& at);
  // Ends the tracks taconitetrack ended (waits up to kBestFaceDrainMs first when a better face of
  // one of them is still being written, so its end event names it).
  std::vector<std::string> end_tracks(const TracksEnded& ended, const EventTime& at);
  // Ends every open track (waits up to kBestFaceDrainMs for the faces being written first).
  std::vector<std::string> end_all(const char* reason, const EventTime& at);

  std::uint64_t evicted() const { return book_.evicted(); }
  std::uint64_t faces_dropped() const { return writer_ ? writer_->dropped() : 0; }
  // Strings of the events written so far that were not UTF-8 (a label set upstream).
  const json::Repairs& repairs() const { return repairs_; }
  std::uint64_t faces_aligned() const { return aligned_; }  // crops made for the writer

 private:
  explicit TrackEvents(const TrackEventsSettings& settings)
      : settings_(settings), book_(settings.timeout_frames, settings.max_tracks) {}
  void collect_finished(const EventTime& at, std::vector<TrackEvent>& events);
  std::vector<std::string> documents(const std::vector<TrackEvent>& events);

  TrackEventsSettings settings_;
  TrackBook book_;
  std::unique_ptr<BestFaceWriter> writer_;
  json::Repairs repairs_;
  std::uint64_t aligned_ = 0;
};

}  // namespace taconite::gst
