// taconitepublish's open tracks and the events they make (docs/tracks-message.md): a track is new
// on the first frame a face carries its id (its uid is taconitetrack's, else one made here that no
// other track of any run has), updated when its identity is decided or changes or a better best
// face is ready, and ends when taconitetrack says so (end_tracks), when a track without a tracker
// uid is not seen for `timeout_frames` frames, when evicted to keep at most `max_tracks` open, or
// for all at once (end of stream, flush, new stream, the element stopping); it ends known or
// unknown, never pending.
// Plain bookkeeping on the streaming thread: no GStreamer, no JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "best_face_writer.hpp"
#include "best_faces.hpp"
#include "roi_identity.hpp"
#include "tracks_ended.hpp"

namespace taconite::gst {

// When something happened: the wall clock and, when the buffer had one, the frame's PTS.
struct EventTime {
  std::int64_t utc_us = 0;
  std::optional<std::uint64_t> pts_ns;
};

// A track the book has open: what its events say of it (an End event carries it as it was last).
struct OpenTrack {
  std::int64_t track_id = 0;
  std::string uid;                  // unique for good (a random UUID): names the track's files
  bool tracker_owned = false;       // the uid is taconitetrack's: it ends the track, no timeout here
  EventTime first, last;            // the first and last frames it was seen on
  std::uint64_t frames = 0;         // frames it was seen on
  std::uint64_t last_frame = 0;     // the book's frame number it was last seen on
  std::optional<RoiIdentity> identity;
  // Set at the end with taconiteidentify upstream: whether it judged the track (false: it ended
  // before any embedding of it was searched, and ends unknown).
  std::optional<bool> identified;
  BestQuality offered;              // the best face handed to the best-face writer so far
  std::optional<EncodedFace> best_face;
};

struct TrackEvent {
  enum class Kind { New, Update, End };
  Kind kind = Kind::New;
  // End: "lost", "scene-cut", "reset" (taconitetrack's, or "lost" on the timeout), "evicted", "eos",
  // "flush", "stream-start", "stopped"
  std::string end_reason;
  EventTime at;
  OpenTrack track;
};

// One tracked face of a frame.
struct Sighting {
  std::int64_t track_id = 0;
  std::string uid;  // taconitetrack's uid of the track; empty without one
  std::optional<RoiIdentity> identity;
  std::optional<double> quality;  // taconiteadaface's score; none: not a best-face candidate
};

class TrackBook {
 public:
  TrackBook(std::uint64_t timeout_frames, std::size_t max_tracks)
      : timeout_frames_(timeout_frames), max_tracks_(max_tracks) {}

  // One frame's tracked faces (a track id appearing twice counts once, the first). Appends the
  // events and the indices of the sightings whose face beats its track's best so far (BestQuality).
  void frame(std::span<const Sighting> sightings, const EventTime& at, std::vector<TrackEvent>& events,
             std::vector<std::size_t>& better);
  // Ends the open tracks taconitetrack ended (a track whose uid differs is another one), with its
  // reason.
  void end_tracks(const TracksEnded& ended, const EventTime& at, std::vector<TrackEvent>& events);
  // Whether one of `ended`'s open tracks has a better face at the writer, not yet ready.
  bool awaiting_face(const TracksEnded& ended) const;
  // The uid of open track `track_id` (empty when none is open).
  std::string uid_of(std::int64_t track_id) const;
  // The writer took the better face of `track_id` with `quality`.
  void offered(std::int64_t track_id, double quality);
  // The writer finished a face: an update when its track (the same uid) is still open.
  void face_ready(EncodedFace face, const EventTime& at, std::vector<TrackEvent>& events);
  // Ends every open track, oldest first.
  void end_all(const char* reason, const EventTime& at, std::vector<TrackEvent>& events);

  std::size_t open() const { return tracks_.size(); }
  std::uint64_t evicted() const { return evicted_; }

 private:
  void end(std::map<std::int64_t, OpenTrack>::iterator it, const std::string& reason, const EventTime& at,
           std::vector<TrackEvent>& events);

  std::uint64_t timeout_frames_;
  std::size_t max_tracks_;
  std::uint64_t frame_ = 0;
  std::uint64_t evicted_ = 0;
  std::map<std::int64_t, OpenTrack> tracks_;
};

}  // namespace taconite::gst
