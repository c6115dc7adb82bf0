// Per-track identity decisions of taconiteidentify, made for few, quality-ranked embeddings
// (best-shot embedding computes about one per track): each newly computed embedding of a tracked
// face casts one vote (an identity, or unknown below the threshold) weighted by the face's quality.
// The first vote decides the track at once. Afterwards the track's identity is the one with the
// largest total weight over its last `window` votes (a tie keeps the decision), but a named track
// changes (to another identity or to unknown) only when that challenger also holds at least
// `min_votes` of them, so one bad frame never flips a name; a track decided unknown is named by
// the heaviest identity at once (a better view recognised). A track is undecided ("pending") only
// until its first vote. Owned by one element's streaming
// thread; no locking.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace taconite::vision {

inline constexpr std::int64_t kUnknownIdentity = -1;
// A vote's weight is its face's quality clamped to [kMinVoteWeight, 1] (no quality: 1), so a
// poor face still counts a little and no number makes one vote outweigh the rest unbounded.
inline constexpr double kMinVoteWeight = 0.05;

struct VotePolicy {
  unsigned window = 5;            // votes a track remembers
  unsigned min_votes = 2;         // votes a challenger needs in the window to change a named track
  unsigned timeout = 150;         // frames a track may be missing before it is forgotten
  std::size_t max_tracks = 1024;  // tracks kept at most; the longest unseen goes first
};

struct IdentityVote {
  std::int64_t identity = kUnknownIdentity;
  std::string name;  // "unknown" for kUnknownIdentity
  double similarity = 0.0;
  double weight = 1.0;  // vote_weight() of the face's quality
};

// The weight of a vote from a face of quality `quality` (none: 1; NaN: the floor).
double vote_weight(std::optional<double> quality);

// One identity a gallery search ranked for an embedding, best first in a search's answer. Its own
// type (the element converts its gallery's matches) so vision/ needs no gallery library.
struct IdentityCandidate {
  std::int64_t identity = kUnknownIdentity;
  std::string name;
  float similarity = 0.0f;  // cosine of the embedding and the identity's best template
};

// A track's last searched embedding's answer: a reused (cached) embedding keeps it, unsearched.
struct TrackSearch {
  std::uint64_t frame = 0;  // when it was searched
  std::int64_t gallery_revision = -1;
  std::vector<IdentityCandidate> candidates;
};

struct TrackDecision {
  bool settled = false;             // a decision exists (else the track has not voted yet)
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
  // The track's decided identity (no vote added); null before its first vote or unknown to us.
  const IdentityVote* decided(std::int64_t track) const;
  // The track's last answer; null when it has none.
  const TrackSearch* last_search(std::int64_t track) const;
  // The track (added) ends only by end(), never by evict(): a tracker upstream ends it.
  void keep_until_ended(std::int64_t track);
  // Forgets the tracks not kept until ended that were not seen for more than `timeout` frames up to `now`.
  void evict(std::uint64_t now, unsigned timeout);
  // Forgets `track` (its tracker ended it).
  void end(std::int64_t track) { tracks_.erase(track); }
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
    bool until_ended = false;  // keep_until_ended()
  };
  static void decide(Track& t, const VotePolicy& policy);

  std::unordered_map<std::int64_t, Track> tracks_;
};

}  // namespace taconite::vision
