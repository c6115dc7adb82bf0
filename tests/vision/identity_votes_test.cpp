// taconiteidentify's per-track vote (vision/identity_votes.cpp), without a pipeline.
#include "identity_votes.hpp"

#include <gtest/gtest.h>

namespace {

using namespace taconite::vision;

IdentityVote vote(std::int64_t id, double similarity = 0.9) {
  return {id, id == kUnknownIdentity ? "unknown" : "id" + std::to_string(id), similarity};
}

TEST(IdentityVotes, DecidesAfterMinVotesAndOneBadFrameDoesNotFlip) {
  IdentityVotes votes;
  VotePolicy policy;  // window 5, min 3
  EXPECT_FALSE(votes.add(1, 0, vote(7), policy).settled);
  EXPECT_FALSE(votes.add(1, 1, vote(7), policy).settled);
  TrackDecision d = votes.add(1, 2, vote(7, 0.8), policy);
  ASSERT_TRUE(d.settled);
  EXPECT_EQ(d.identity.identity, 7);
  EXPECT_TRUE(d.first_for_identity);
  EXPECT_NEAR(d.identity.similarity, (0.9 + 0.9 + 0.8) / 3, 1e-12);  // mean of the winning votes
  d = votes.add(1, 3, vote(9), policy);                              // one bad frame
  EXPECT_EQ(d.identity.identity, 7);
  EXPECT_FALSE(d.first_for_identity);
  d = votes.add(1, 4, vote(kUnknownIdentity, 0.1), policy);  // 3 of 5 still 7
  EXPECT_EQ(d.identity.identity, 7);
  // No majority (7,9,unknown,9,9 -> 9 has 3 of 5): 9 wins only with a strict majority.
  votes.add(1, 5, vote(9), policy);
  d = votes.add(1, 6, vote(9), policy);
  EXPECT_EQ(d.identity.identity, 9);
  EXPECT_TRUE(d.first_for_identity);
  EXPECT_EQ(d.votes, 5u);
}

// Issue 23: a face without a usable embedding shows its track's decision, read without voting.
TEST(IdentityVotes, DecidedIsReadWithoutAVote) {
  IdentityVotes votes;
  VotePolicy policy;
  policy.min_votes = 2;
  EXPECT_EQ(votes.decided(1), nullptr);  // never seen
  votes.add(1, 0, vote(7), policy);
  EXPECT_EQ(votes.decided(1), nullptr);  // voting
  votes.add(1, 1, vote(7), policy);
  ASSERT_NE(votes.decided(1), nullptr);
  EXPECT_EQ(votes.decided(1)->identity, 7);
  EXPECT_EQ(votes.add(1, 2, std::nullopt, policy).votes, 2u);  // reading added nothing
}

TEST(IdentityVotes, ReusedEmbeddingsAreNoVotesAndTracksAreIndependent) {
  IdentityVotes votes;
  VotePolicy policy;
  policy.min_votes = 2;
  votes.add(1, 0, vote(3), policy);
  for (std::uint64_t f = 1; f < 10; ++f) EXPECT_FALSE(votes.add(1, f, std::nullopt, policy).settled);  // cached frames
  EXPECT_TRUE(votes.add(1, 10, vote(3), policy).settled);
  EXPECT_FALSE(votes.add(2, 10, vote(3), policy).settled);  // another track starts from nothing
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

}  // namespace
