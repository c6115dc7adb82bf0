// Clusters of unknown faces (gallery/unknown_clusters.hpp) on constructed embeddings: who joins,
// who does not, chains, ties at the threshold, determinism under shuffling, hostile options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "unknown_clusters.hpp"

namespace {

using namespace taconite::gallery;

constexpr std::size_t kDim = 64;

std::vector<float> unit(std::vector<float> v) {
  double sum = 0.0;
  for (float x : v) sum += static_cast<double>(x) * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

std::vector<float> random_direction(std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(kDim);
  for (float& x : v) x = normal(rng);
  return unit(v);
}

// A view of `person`: its direction plus noise of about `noise` per unit length.
std::vector<float> view(const std::vector<float>& person, float noise, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, noise / std::sqrt(static_cast<float>(kDim)));
  std::vector<float> v = person;
  for (float& x : v) x += normal(rng);
  return unit(v);
}

UnknownFaceRow face(std::int64_t id, std::vector<float> embedding) {
  UnknownFaceRow f;
  f.id = id;
  f.embedding = std::move(embedding);
  return f;
}

// Each cluster as (id, sorted face ids), in the order given.
std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> describe(const std::vector<UnknownCluster>& clusters,
                                                                         const std::vector<UnknownFaceRow>& faces) {
  std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> out;
  for (const UnknownCluster& c : clusters) {
    std::vector<std::int64_t> ids;
    for (std::size_t m : c.members) ids.push_back(faces[m].id);
    out.push_back({c.id, ids});
  }
  return out;
}

TEST(UnknownClusters, TwoPeopleJoinAndNoiseStaysAlone) {
  std::mt19937 rng(7);
  const auto alice = random_direction(rng), bob = random_direction(rng);
  std::vector<UnknownFaceRow> faces;
  // Interleaved, as tracks of two people at two cameras arrive.
  for (int i = 0; i < 5; ++i) faces.push_back(face(10 + 2 * i, view(alice, 0.5f, rng)));
  for (int i = 0; i < 4; ++i) faces.push_back(face(11 + 2 * i, view(bob, 0.5f, rng)));
  for (int i = 0; i < 3; ++i) faces.push_back(face(30 + i, random_direction(rng)));
  auto clusters = cluster_unknown_faces(faces);
  ASSERT_TRUE(clusters.ok()) << clusters.error().message;
  using Ids = std::vector<std::int64_t>;
  const auto got = describe(clusters.value(), faces);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0], std::make_pair(std::int64_t{10}, Ids{10, 12, 14, 16, 18}));  // largest first
  EXPECT_EQ(got[1], std::make_pair(std::int64_t{11}, Ids{11, 13, 15, 17}));
  EXPECT_EQ(got[2], std::make_pair(std::int64_t{30}, Ids{30}));  // ties by id
  EXPECT_EQ(got[3], std::make_pair(std::int64_t{31}, Ids{31}));
  EXPECT_EQ(got[4], std::make_pair(std::int64_t{32}, Ids{32}));
}

// Single linkage: neighbours along a chain join even where its ends are far apart.
TEST(UnknownClusters, AChainOfCloseFacesIsOneCluster) {
  std::vector<UnknownFaceRow> faces;
  for (int i = 0; i < 4; ++i) {
    std::vector<float> v(kDim, 0.0f);
    const double angle = i * 50.0 * M_PI / 180.0;  // cos 50 deg = 0.64 to the next; cos 150 deg < 0 end to end
    v[0] = static_cast<float>(std::cos(angle));
    v[1] = static_cast<float>(std::sin(angle));
    faces.push_back(face(i + 1, v));
  }
  auto clusters = cluster_unknown_faces(faces, 0.6);
  ASSERT_TRUE(clusters.ok());
  ASSERT_EQ(clusters.value().size(), 1u);
  EXPECT_EQ(clusters.value()[0].members.size(), 4u);
  // Above cos 50 deg no link holds.
  EXPECT_EQ(cluster_unknown_faces(faces, 0.65).value().size(), 4u);
}

TEST(UnknownClusters, DistinctFacesAreSingletonsAndAPairAtTheThresholdJoins) {
  std::vector<UnknownFaceRow> faces;
  for (std::size_t i = 0; i < 6; ++i) {
    std::vector<float> v(kDim, 0.0f);
    v[i] = 1.0f;
    faces.push_back(face(static_cast<std::int64_t>(100 - i), v));
  }
  auto clusters = cluster_unknown_faces(faces);
  ASSERT_TRUE(clusters.ok());
  ASSERT_EQ(clusters.value().size(), 6u);
  EXPECT_EQ(clusters.value()[0].id, 95);
  EXPECT_EQ(clusters.value()[5].id, 100);
  // Similarity exactly 0.5 (0.5 * 1 in float): >= the threshold joins.
  std::vector<float> half(kDim, 0.0f);
  half[0] = 0.5f;
  half[10] = static_cast<float>(std::sqrt(0.75));  // an axis no other face uses
  faces.push_back(face(200, half));
  auto joined = cluster_unknown_faces(faces, 0.5);
  ASSERT_TRUE(joined.ok());
  ASSERT_EQ(joined.value().size(), 6u);
  EXPECT_EQ(joined.value()[0].id, 100);  // the axis-0 face and the new one: the only pair
  EXPECT_EQ(joined.value()[0].members.size(), 2u);
}

TEST(UnknownClusters, TheSameFacesInAnyOrderGiveTheSameClusters) {
  std::mt19937 rng(11);
  std::vector<std::vector<float>> people;
  for (int p = 0; p < 40; ++p) people.push_back(random_direction(rng));
  std::vector<UnknownFaceRow> faces;
  for (int i = 0; i < 400; ++i) faces.push_back(face(i + 1, view(people[rng() % people.size()], 0.6f, rng)));
  auto reference = cluster_unknown_faces(faces);
  ASSERT_TRUE(reference.ok());
  const auto expected = describe(reference.value(), faces);
  EXPECT_GE(expected.size(), 35u);
  EXPECT_LE(expected.size(), 60u);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(faces.begin(), faces.end(), rng);
    auto again = cluster_unknown_faces(faces);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(describe(again.value(), faces), expected) << "round " << round;
  }
}

// A cluster's id is its smallest face id: adding faces (with larger ids) keeps it.
TEST(UnknownClusters, ClusterIdsStayWhileFacesAreAdded) {
  std::mt19937 rng(3);
  const auto alice = random_direction(rng), bob = random_direction(rng);
  std::vector<UnknownFaceRow> faces = {face(4, view(alice, 0.4f, rng)), face(5, view(bob, 0.4f, rng)),
                                       face(6, view(alice, 0.4f, rng))};
  auto before = cluster_unknown_faces(faces).value();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].id, 4);
  EXPECT_EQ(before[1].id, 5);
  for (int i = 0; i < 5; ++i) faces.push_back(face(7 + i, view(bob, 0.4f, rng)));
  auto after = cluster_unknown_faces(faces).value();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].id, 5);  // bob's cluster grew past alice's
  EXPECT_EQ(after[0].members.size(), 6u);
  EXPECT_EQ(after[1].id, 4);
}

TEST(UnknownClusters, HostileOptionsAndInputsAreRefused) {
  std::vector<UnknownFaceRow> faces = {face(1, std::vector<float>(kDim, 0.125f))};
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), 0.0, -0.5, 1.5,
                     std::numeric_limits<double>::infinity()}) {
    auto r = cluster_unknown_faces(faces, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("cluster threshold"), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(cluster_unknown_faces(faces, 1.0).ok());
  faces.push_back(face(2, std::vector<float>(kDim - 1, 0.125f)));
  auto r = cluster_unknown_faces(faces);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown face 2 has 63 embedding values, expected 64"), std::string::npos)
      << r.error().message;
  faces[1].embedding.clear();  // read without embeddings
  EXPECT_FALSE(cluster_unknown_faces(faces).ok());
  std::vector<UnknownFaceRow> too_many(kMaxUnknownFaces + 1);
  r = cluster_unknown_faces(too_many);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("at most 100000"), std::string::npos) << r.error().message;
  EXPECT_TRUE(cluster_unknown_faces(std::vector<UnknownFaceRow>{}).value().empty());
}

// Faces that are all one person: the range search's results stay bounded (blocks of queries)
// and the answer is one cluster.
TEST(UnknownClusters, ThousandsOfViewsOfOnePersonAreOneCluster) {
  std::mt19937 rng(5);
  const auto person = random_direction(rng);
  std::vector<UnknownFaceRow> faces;
  for (int i = 0; i < 3000; ++i) faces.push_back(face(i + 1, view(person, 0.3f, rng)));
  auto clusters = cluster_unknown_faces(faces);
  ASSERT_TRUE(clusters.ok());
  ASSERT_EQ(clusters.value().size(), 1u);
  EXPECT_EQ(clusters.value()[0].members.size(), 3000u);
  EXPECT_EQ(clusters.value()[0].id, 1);
}

}  // namespace
