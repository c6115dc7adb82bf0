#include "identity_votes.hpp"

#include <algorithm>
#include <map>

namespace taconite::gst {

TrackDecision IdentityVotes::add(gint64 track, guint64 now, const std::optional<IdentityVote>& vote,
                                 const VotePolicy& policy) {
  if (!tracks_.contains(track) && tracks_.size() >= std::max<std::size_t>(policy.max_tracks, 1)) {
    const auto oldest = std::min_element(tracks_.begin(), tracks_.end(), [](const auto& a, const auto& b) {
      return a.second.last_seen < b.second.last_seen;
    });
    tracks_.erase(oldest);
  }
  Track& t = tracks_[track];
  t.last_seen = now;
  TrackDecision decision;
  if (vote) {
    t.votes.push_back(*vote);
    while (t.votes.size() > std::max<guint>(policy.window, 1)) t.votes.pop_front();
    struct Tally {
      guint count = 0;
      double similarity = 0.0;
      const IdentityVote* latest = nullptr;
    };
    std::map<std::int64_t, Tally> tally;
    for (const IdentityVote& v : t.votes) {
      Tally& entry = tally[v.identity];
      ++entry.count;
      entry.similarity += v.similarity;
      entry.latest = &v;
    }
    const auto best = std::max_element(tally.begin(), tally.end(),
                                       [](const auto& a, const auto& b) { return a.second.count < b.second.count; });
    const guint needed = std::max<guint>(policy.min_votes, 1);
    if (best->second.count >= needed && 2 * best->second.count > t.votes.size()) {
      IdentityVote winner = *best->second.latest;
      winner.similarity = best->second.similarity / best->second.count;
      t.decided = winner;
      decision.first_for_identity = t.announced.insert(winner.identity).second;
    }
  }
  decision.votes = static_cast<guint>(t.votes.size());
  if (t.decided) {
    decision.settled = true;
    decision.identity = *t.decided;
  }
  return decision;
}

void IdentityVotes::remember(gint64 track, TrackSearch search) {
  if (const auto it = tracks_.find(track); it != tracks_.end()) {
    it->second.last_search = std::move(search);
    it->second.deferred = false;
  }
}

void IdentityVotes::defer(gint64 track) {
  if (const auto it = tracks_.find(track); it != tracks_.end()) it->second.deferred = true;
}

bool IdentityVotes::deferred(gint64 track) const {
  const auto it = tracks_.find(track);
  return it != tracks_.end() && it->second.deferred;
}

const TrackSearch* IdentityVotes::last_search(gint64 track) const {
  const auto it = tracks_.find(track);
  return it != tracks_.end() && it->second.last_search ? &*it->second.last_search : nullptr;
}

void IdentityVotes::evict(guint64 now, guint timeout) {
  std::erase_if(tracks_, [&](const auto& entry) { return now > entry.second.last_seen + timeout; });
}

}  // namespace taconite::gst
