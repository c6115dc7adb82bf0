#include "identity_votes.hpp"

#include <algorithm>
#include <map>

namespace taconite::vision {

TrackDecision IdentityVotes::add(std::int64_t track, std::uint64_t now, const std::optional<IdentityVote>& vote,
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
    while (t.votes.size() > std::max<unsigned>(policy.window, 1)) t.votes.pop_front();
    struct Tally {
      unsigned count = 0;
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
    const unsigned needed = std::max<unsigned>(policy.min_votes, 1);
    if (best->second.count >= needed && 2 * best->second.count > t.votes.size()) {
      IdentityVote winner = *best->second.latest;
      winner.similarity = best->second.similarity / best->second.count;
      t.decided = winner;
      decision.first_for_identity = t.announced.insert(winner.identity).second;
    }
  }
  decision.votes = static_cast<unsigned>(t.votes.size());
  if (t.decided) {
    decision.settled = true;
    decision.identity = *t.decided;
  }
  return decision;
}

void IdentityVotes::remember(std::int64_t track, TrackSearch search) {
  if (const auto it = tracks_.find(track); it != tracks_.end()) {
    it->second.last_search = std::move(search);
    it->second.deferred = false;
  }
}

void IdentityVotes::defer(std::int64_t track) {
  if (const auto it = tracks_.find(track); it != tracks_.end()) it->second.deferred = true;
}

bool IdentityVotes::deferred(std::int64_t track) const {
  const auto it = tracks_.find(track);
  return it != tracks_.end() && it->second.deferred;
}

const IdentityVote* IdentityVotes::decided(std::int64_t track) const {
  const auto it = tracks_.find(track);
  return it != tracks_.end() && it->second.decided ? &*it->second.decided : nullptr;
}

const TrackSearch* IdentityVotes::last_search(std::int64_t track) const {
  const auto it = tracks_.find(track);
  return it != tracks_.end() && it->second.last_search ? &*it->second.last_search : nullptr;
}

void IdentityVotes::evict(std::uint64_t now, unsigned timeout) {
  std::erase_if(tracks_, [&](const auto& entry) { return now > entry.second.last_seen + timeout; });
}

}  // namespace taconite::vision
