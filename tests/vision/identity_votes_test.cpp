// taconiteidentify's per-track vote (vision/identity_votes.cpp), without a pipeline.
#include "identity_votes.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace taconite::vision;

IdentityVote vote(std::int64_t id, double similarity = 0.9, double weight = 1.0) {
  return {id, id == kUnknownIdentity ? "unknown" : "id" + std::to_string(id), similarity, weight};
}

// Best-shot embedding computes about one embedding per track: that one vote decides it.
TEST(IdentityVotes, FirstVoteDecidesAKnownOrAnUnknownTrack) {
  IdentityVotes votes;
  const VotePolicy policy;  // window 5, min 2
  TrackDecision d = votes.add(1, 0, vote(7, 0.8), policy);
  ASSERT_TRUE(d.settled);
  EXPECT_EQ(d.identity.identity, 7);
  EXPECT_EQ(d.identity.name, "id7");
  EXPECT_DOUBLE_EQ(d.identity.similarity, 0.8);
  EXPECT_TRUE(d.first_for_identity);
  EXPECT_EQ(d.votes, 1u);
  d = votes.add(2, 0, vote(kUnknownIdentity, 0.21), policy);
  ASSERT_TRUE(d.settled);
  EXPECT_EQ(d.identity.identity, kUnknownIdentity);
  EXPECT_EQ(d.identity.name, "unknown");
  EXPECT_DOUBLE_EQ(d.identity.similarity, 0.21);  // the nearest identity's, below the threshold
  EXPECT_TRUE(d.first_for_identity);
}

TEST(IdentityVotes, PendingOnlyUntilTheFirstVote) {
  IdentityVotes votes;
  const VotePolicy policy;
  EXPECT_FALSE(votes.add(1, 0, std::nullopt, policy).settled);  // seen, its embedding not searched yet
  EXPECT_EQ(votes.decided(1), nullptr);
  EXPECT_TRUE(votes.add(1, 1, vote(3), policy).settled);
}

TEST(IdentityVotes, OneBadFrameNeverFlipsADecidedLabel) {
  IdentityVotes votes;
  VotePolicy policy;
  policy.min_votes = 3;
  votes.add(1, 0, vote(7, 0.6, 0.2), policy);  // a poor first face decides
  // One better-quality vote for another identity, then unknown: each one vote only, 7 stays.
  TrackDecision d = votes.add(1, 1, vote(9, 0.9, 1.0), policy);
  EXPECT_EQ(d.identity.identity, 7);
  EXPECT_FALSE(d.first_for_identity);
  d = votes.add(1, 2, vote(kUnknownIdentity, 0.1), policy);
  EXPECT_EQ(d.identity.identity, 7);
  EXPECT_DOUBLE_EQ(d.identity.similarity, 0.6);  // its own votes' mean, not the challengers'
  // The default min-votes 2 keeps the promise too.
  IdentityVotes defaults;
  defaults.add(1, 0, vote(7), VotePolicy{});
  EXPECT_EQ(defaults.add(1, 1, vote(9, 0.95), VotePolicy{}).identity.identity, 7);
}

TEST(IdentityVotes, ChallengerWithMinVotesAndTheMostWeightOverturns) {
  IdentityVotes votes;
  const VotePolicy policy;  // min 2
  votes.add(1, 0, vote(5, 0.5, 0.3), policy);
  TrackDecision d = votes.add(1, 1, vote(7, 0.7, 0.8), policy);
  EXPECT_EQ(d.identity.identity, 5);  // one vote is not enough to rename
  d = votes.add(1, 2, vote(7, 0.8, 0.9), policy);
  ASSERT_EQ(d.identity.identity, 7);  // two votes and 1.7 of weight against 0.3
  EXPECT_TRUE(d.first_for_identity);
  EXPECT_NEAR(d.identity.similarity, 0.75, 1e-12);  // mean of its votes in the window
  EXPECT_EQ(d.votes, 3u);
  // Unknown needs min-votes too to take a named track; back to an identity it had: no announcement.
  EXPECT_EQ(votes.add(1, 3, vote(kUnknownIdentity, 0.2), policy).identity.identity, 7);
  d = votes.add(1, 4, vote(kUnknownIdentity, 0.2), policy);  // window 5 7 7 u u: 7 holds 1.7 against 2.0
  EXPECT_EQ(d.identity.identity, kUnknownIdentity);
  EXPECT_TRUE(d.first_for_identity);
  d = votes.add(1, 5, vote(5, 0.9, 1.0), policy);
  EXPECT_EQ(d.identity.identity, kUnknownIdentity);  // 5 is lighter than unknown's 2.0
}

// Nobody recognised yet is no name to protect: a heavier (better) view of an identity names a
// track decided unknown at once; a lighter one does not.
TEST(IdentityVotes, AHeavierVoteNamesATrackDecidedUnknown) {
  IdentityVotes votes;
  const VotePolicy policy;
  votes.add(1, 0, vote(kUnknownIdentity, 0.26, 0.4), policy);  // a poor first view
  EXPECT_EQ(votes.add(1, 1, vote(7, 0.35, 0.3), policy).identity.identity, kUnknownIdentity);  // lighter
  const TrackDecision d = votes.add(1, 2, vote(7, 0.62, 0.9), policy);  // 1.2 against 0.4
  EXPECT_EQ(d.identity.identity, 7);
  EXPECT_TRUE(d.first_for_identity);
}

TEST(IdentityVotes, QualityWeightsDecideBetweenChallengers) {
  IdentityVotes votes;
  const VotePolicy policy;
  votes.add(1, 0, vote(7, 0.9, 0.9), policy);
  // Three poor votes for 9 (weight 0.6 together) against 7's one good one: 7 keeps the most weight.
  for (std::uint64_t f = 1; f <= 3; ++f) EXPECT_EQ(votes.add(1, f, vote(9, 0.5, 0.2), policy).identity.identity, 7);
  // One good vote more makes 9 the heaviest (0.6 + 0.8 against 0.9 in the window 7 9 9 9 9).
  EXPECT_EQ(votes.add(1, 4, vote(9, 0.6, 0.8), policy).identity.identity, 9);
}

TEST(IdentityVotes, WeightsAreBounded) {
  EXPECT_DOUBLE_EQ(vote_weight(std::nullopt), 1.0);
  EXPECT_DOUBLE_EQ(vote_weight(0.5), 0.5);
  EXPECT_DOUBLE_EQ(vote_weight(0.0), kMinVoteWeight);
  EXPECT_DOUBLE_EQ(vote_weight(-3.0), kMinVoteWeight);
  EXPECT_DOUBLE_EQ(vote_weight(1e300), 1.0);
  EXPECT_DOUBLE_EQ(vote_weight(std::nan("")), kMinVoteWeight);
  // A vote made with an out-of-range weight counts as bounded: 1e9 does not outweigh two votes.
  IdentityVotes votes;
  const VotePolicy policy;
  votes.add(1, 0, vote(7, 0.9, 1e9), policy);
  votes.add(1, 1, vote(9, 0.9, 1.0), policy);
  EXPECT_EQ(votes.add(1, 2, vote(9, 0.9, 1.0), policy).identity.identity, 9);
}

TEST(IdentityVotes, ATieKeepsTheDecidedIdentity) {
  IdentityVotes votes;
  const VotePolicy policy;
  votes.add(1, 0, vote(7), policy);
  votes.add(1, 1, vote(7), policy);
  votes.add(1, 2, vote(9), policy);
  EXPECT_EQ(votes.add(1, 3, vote(9), policy).identity.identity, 7);  // 2.0 against 2.0
}

// Issue 23: a face without a usable embedding shows its track's decision, read without voting.
TEST(IdentityVotes, DecidedIsReadWithoutAVote) {
  IdentityVotes votes;
  const VotePolicy policy;
  EXPECT_EQ(votes.decided(1), nullptr);  // never seen
  votes.add(1, 0, vote(7), policy);
  ASSERT_NE(votes.decided(1), nullptr);
  EXPECT_EQ(votes.decided(1)->identity, 7);
  EXPECT_EQ(votes.add(1, 2, std::nullopt, policy).votes, 1u);  // reading added nothing
}

TEST(IdentityVotes, ReusedEmbeddingsAreNoVotesAndTracksAreIndependent) {
  IdentityVotes votes;
  const VotePolicy policy;
  votes.add(1, 0, vote(3), policy);
  for (std::uint64_t f = 1; f < 10; ++f) {
    const TrackDecision d = votes.add(1, f, std::nullopt, policy);  // cached frames
    EXPECT_EQ(d.votes, 1u);
    EXPECT_FALSE(d.first_for_identity);
  }
  EXPECT_FALSE(votes.add(2, 10, std::nullopt, policy).settled);  // another track starts from nothing
}

TEST(IdentityVotes, TracksAreEvictedAndBounded) {
  IdentityVotes votes;
  VotePolicy policy;
  policy.max_tracks = 4;
  for (std::int64_t t = 0; t < 10; ++t) votes.add(t, static_cast<std::uint64_t>(t), vote(1), policy);
  EXPECT_EQ(votes.size(), 4u);
  votes.evict(100, 50);
  EXPECT_EQ(votes.size(), 0u);
}

TEST(IdentityVotes, ATrackKeptUntilEndedOutlivesTheTimeoutAndEndsOnEnd) {
  IdentityVotes votes;
  const VotePolicy policy;
  votes.add(1, 0, vote(3), policy);
  votes.keep_until_ended(1);
  votes.add(2, 0, vote(3), policy);
  votes.evict(1000, 150);
  EXPECT_EQ(votes.size(), 1u) << "only the track without a tracker timed out";
  ASSERT_NE(votes.decided(1), nullptr);
  votes.end(1);
  EXPECT_EQ(votes.size(), 0u);
  EXPECT_EQ(votes.decided(1), nullptr);
}

}  // namespace
