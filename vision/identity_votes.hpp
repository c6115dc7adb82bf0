// Per-track identity decisions of taconiteidentify: each newly computed embedding of a tracked
// face casts one vote (an identity, or unknown below the threshold); a track's identity is the one
// holding a strict majority of its last `window` votes once it has at least `min_votes`. Without a
// majority the previous decision stands, so one bad frame never flips a label. Owned by one
// element's streaming thread; no locking.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gallery_index.hpp"

namespace taconite::vision {

inline constexpr std::int64_t kUnknownIdentity = -1;

struct VotePolicy {
  unsigned window = 5;            // votes a track remembers
  unsigned min_votes = 3;         // votes needed before a decision (1: decide on the first)
  unsigned timeout = 150;         // frames a track may be missing before it is forgotten
  std::size_t max_tracks = 1024;  // tracks kept at most; the longest unseen goes first
};

struct IdentityVote {
  std::int64_t identity = kUnknownIdentity;
  std::string name;  // "unknown" for kUnknownIdentity
  double similarity = 0.0;
};

// A track's last searched embedding's answer: a reused (cached) embedding keeps it, unsearched.
struct TrackSearch {
  std::uint64_t frame = 0;  // when it was searched
  std::int64_t gallery_revision = -1;
  std::vector<gallery::IdentityMatch> matches;
};

struct TrackDecision {
  bool settled = false;             // a decision exists (else the track is still voting)
  IdentityVote identity;            // the decided identity; similarity = mean of its votes in the window
  bool first_for_identity = false;  // this call settled the track on an identity it never had before
  unsigned votes = 0;               // votes in the window
};

class IdentityVotes {
 public:
  // Adds `vote` (none: a reused embedding, nothing new to count) for `track` at frame `now`.
  TrackDecision add(std::int64_t track, std::uint64_t now, const std::optional<IdentityVote>& vote,
                    const VotePolicy& policy);
  // Keeps `search` as the track's last answer (the track must have been added); it is searched.
  void remember(std::int64_t track, TrackSearch search);
  // The track's newest embedding was not searched (over the search budget): the same vector,
  // reused by the next frames, still has to vote. Cleared by remember().
  void defer(std::int64_t track);
  bool deferred(std::int64_t track) const;
  // The track's decided identity (no vote added); null while it is voting or unknown to us.
  const IdentityVote* decided(std::int64_t track) const;
  // The track's last answer; null when it has none.
  const TrackSearch* last_search(std::int64_t track) const;
  // Forgets tracks not seen for more than `timeout` frames up to `now`.
  void evict(std::uint64_t now, unsigned timeout);
  void clear() { tracks_.clear(); }
  std::size_t size() const { return tracks_.size(); }

 private:
  struct Track {
    std::deque<IdentityVote> votes;
    std::optional<IdentityVote> decided;
    std::unordered_set<std::int64_t> announced;  // identities already reported for this track
    std::uint64_t last_seen = 0;
    std::optional<TrackSearch> last_search;
    bool deferred = false;
  };
  std::unordered_map<std::int64_t, Track> tracks_;
};

}  // namespace taconite::vision
