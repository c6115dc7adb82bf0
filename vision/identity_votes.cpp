#include "identity_votes.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace taconite::vision {

double vote_weight(std::optional<double> quality) {
  if (!quality) return 1.0;
  if (std::isnan(*quality)) return kMinVoteWeight;
  return std::clamp(*quality, kMinVoteWeight, 1.0);
}

void IdentityVotes::decide(Track& t, const VotePolicy& policy) {
  struct Tally {
    unsigned count = 0;
    double weight = 0.0;
    double similarity = 0.0;
    std::size_t newest = 0;  // index of its newest vote in the window
    const IdentityVote* latest = nullptr;
  };
  std::map<std::int64_t, Tally> tally;
  for (std::size_t i = 0; i < t.votes.size(); ++i) {
    const IdentityVote& v = t.votes[i];
    Tally& entry = tally[v.identity];
    ++entry.count;
    entry.weight += v.weight;
    entry.similarity += v.similarity;
    entry.newest = i;
    entry.latest = &v;
  }
  // The leader holds the largest total weight; a tie keeps the decided identity, else goes to the
  // identity voted for most recently.
  const std::optional<std::int64_t> current = t.decided ? std::optional(t.decided->identity) : std::nullopt;
  const auto ranks_above = [&](const auto& a, const auto& b) {
    if (a.second.weight != b.second.weight) return a.second.weight > b.second.weight;
    if (current && (a.first == *current) != (b.first == *current)) return a.first == *current;
    return a.second.newest > b.second.newest;
  };
  auto leader = tally.begin();
  for (auto it = tally.begin(); it != tally.end(); ++it)
    if (ranks_above(*it, *leader)) leader = it;
  const Tally& won = leader->second;
  // A challenger takes a named track only with min_votes of the window (one bad frame never flips a
  // name); a track decided unknown (nobody recognised yet) takes the heaviest identity at once, as a
  // better view recognised (best-shot re-embeds a track only for a better view).
  const unsigned needed = current == kUnknownIdentity ? 1 : std::max<unsigned>(policy.min_votes, 1);
  if (current && leader->first != *current && won.count < needed) {
    if (const auto held = tally.find(*current); held != tally.end())
      t.decided->similarity = held->second.similarity / held->second.count;
    return;
  }
  IdentityVote winner = *won.latest;
  winner.similarity = won.similarity / won.count;
  t.decided = winner;
}

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
    t.votes.back().weight = vote_weight(vote->weight);  // bounded whoever made the vote
    while (t.votes.size() > std::max<unsigned>(policy.window, 1)) t.votes.pop_front();
    decide(t, policy);
    decision.first_for_identity = t.announced.insert(t.decided->identity).second;
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

void IdentityVotes::keep_until_ended(std::int64_t track) {
  if (auto it = tracks_.find(track); it != tracks_.end()) it->second.until_ended = true;
}

void IdentityVotes::evict(std::uint64_t now, unsigned timeout) {
  std::erase_if(tracks_, [&](const auto& entry) {
    return !entry.second.until_ended && now > entry.second.last_seen + timeout;
  });
}

}  // namespace taconite::vision
