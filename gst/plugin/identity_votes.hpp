// Per-track identity decisions of taconiteidentify: each newly computed embedding of a tracked
// face casts one vote (an identity, or unknown below the threshold); a track's identity is the one
// holding a strict majority of its last `window` votes once it has at least `min_votes`. Without a
// majority the previous decision stands, so one bad frame never flips a label. Owned by one
// element's streaming thread; no locking.
#pragma once

#include <gst/gst.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace taconite::gst {

inline constexpr std::int64_t kUnknownIdentity = -1;

struct VotePolicy {
  guint window = 5;               // votes a track remembers
  guint min_votes = 3;            // votes needed before a decision (1: decide on the first)
  guint timeout = 150;            // frames a track may be missing before it is forgotten
  std::size_t max_tracks = 1024;  // tracks kept at most; the longest unseen goes first
};

struct IdentityVote {
  std::int64_t identity = kUnknownIdentity;
  std::string name;  // "unknown" for kUnknownIdentity
  double similarity = 0.0;
};

struct TrackDecision {
  bool settled = false;             // a decision exists (else the track is still voting)
  IdentityVote identity;            // the decided identity; similarity = mean of its votes in the window
  bool first_for_identity = false;  // this call settled the track on an identity it never had before
  guint votes = 0;                  // votes in the window
};

class IdentityVotes {
 public:
  // Adds `vote` (none: a reused embedding, nothing new to count) for `track` at frame `now`.
  TrackDecision add(gint64 track, guint64 now, const std::optional<IdentityVote>& vote, const VotePolicy& policy);
  // Forgets tracks not seen for more than `timeout` frames up to `now`.
  void evict(guint64 now, guint timeout);
  void clear() { tracks_.clear(); }
  std::size_t size() const { return tracks_.size(); }

 private:
  struct Track {
    std::deque<IdentityVote> votes;
    std::optional<IdentityVote> decided;
    std::unordered_set<std::int64_t> announced;  // identities already reported for this track
    guint64 last_seen = 0;
  };
  std::unordered_map<gint64, Track> tracks_;
};

}  // namespace taconite::gst
