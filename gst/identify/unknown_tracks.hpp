// taconiteidentify keep-unknowns, per track: while a track is pending or decided unknown, its best
// face so far (highest quality, by best_faces.hpp's rule): the embedding, the nearest gallery
// identity its search found (even below the threshold), the aligned picture, and the track's first
// and last sighting. A track that ends (unseen for longer than the track timeout, or every track at
// the end of a stream) decided unknown gives that face for review; a track that ends pending (too
// few votes to decide) or known gives nothing. GStreamer-free; owned by the streaming thread, no locking.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "best_faces.hpp"
#include "gallery_store.hpp"

namespace taconite::gst {

// What taconiteidentify has decided of a track by a frame (its label_state): still voting, a
// gallery identity, or unknown.
enum class TrackVerdict { Pending, Known, Unknown };

// One face of a track on one frame: a candidate for the track's best face.
struct FaceCandidate {
  double quality = 0.0;              // taconiteadaface's quality, else the embedding's norm
  std::span<const float> embedding;  // unit length, copied when it becomes the best
  double norm = 0.0;                 // the raw embedding's norm (0: unknown)
  std::int64_t nearest_identity = 0;  // 0: the gallery was empty
  std::string nearest_name;
  double nearest_similarity = 0.0;
};

// A track that ended unknown: its best face (stream not set) and picture (empty when none).
struct EndedUnknown {
  gallery::NewUnknownFace face;
  cv::Mat rgb;
};

class UnknownTracks {
 public:
  // More tracks than `max_tracks` at once: the longest unseen one ends first.
  explicit UnknownTracks(std::size_t max_tracks = 1024) : max_tracks_(max_tracks) {}

  // `track` was seen at frame `frame` (`utc_ms`: Unix time in ms) decided `verdict`, `candidate` its
  // face on that frame (null: nothing new to compare, e.g. a reused embedding). True when the
  // candidate became the track's best face: the caller may then give its picture (set_picture).
  bool seen(std::int64_t track, std::uint64_t frame, std::int64_t utc_ms, TrackVerdict verdict,
            const FaceCandidate* candidate);
  // The picture of the track's best face (aligned RGB crop).
  void set_picture(std::int64_t track, cv::Mat rgb);
  // The track (seen) ends only by end_tracks() or end_all(), never by end_stale(): taconitetrack ends it.
  void keep_until_ended(std::int64_t track);
  // Ends the tracks not kept until ended that were not seen for more than `timeout` frames up to
  // `now` (as taconiteidentify's votes forget them) and those pushed out by max_tracks; returns the
  // unknown ones.
  std::vector<EndedUnknown> end_stale(std::uint64_t now, unsigned timeout);
  // Ends `ids` (taconitetrack ended them) and those pushed out by max_tracks; returns the unknown ones.
  std::vector<EndedUnknown> end_tracks(std::span<const std::int64_t> ids);
  // Ends every track (end of stream, flush, a new stream, stop); returns the unknown ones.
  std::vector<EndedUnknown> end_all();
  std::size_t size() const { return tracks_.size(); }

 private:
  struct Track {
    std::int64_t first_ms = 0, last_ms = 0;
    std::uint64_t last_frame = 0;
    TrackVerdict verdict = TrackVerdict::Pending;
    BestQuality best_quality;          // best's (none with it)
    std::optional<EndedUnknown> best;  // none while known (nothing to keep), or before a candidate
    bool until_ended = false;  // keep_until_ended()
  };
  // Adds the track's best face to `out` when it ended unknown.
  static void end(Track& t, std::vector<EndedUnknown>& out);

  std::size_t max_tracks_;
  std::unordered_map<std::int64_t, Track> tracks_;
  std::vector<EndedUnknown> pushed_out_;  // ended by max_tracks, given by the next end_stale
};

}  // namespace taconite::gst
