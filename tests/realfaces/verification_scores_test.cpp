// The arithmetic of bench/realfaces' verification module on scores worked out by hand, and its
// photo listing and largest-face choice on made-up input: none needs ../shared/realfaces.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "aligned_face_finder.hpp"
#include "photo_faces.hpp"
#include "verification_scores.hpp"

namespace {

using namespace taconite::realfaces;
namespace fs = std::filesystem;

PairScores scores_of(std::vector<double> genuine, std::vector<double> impostor) {
  PairScores s;
  s.genuine = std::move(genuine);
  s.impostor = std::move(impostor);
  return s;
}

// Ten impostor scores 0.1 .. 1.0 and four genuine ones.
PairScores ten_impostors() { return scores_of({0.3, 0.55, 0.95, 1.2}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}); }

TEST(VerificationScores, AllPairsSplitIntoGenuineAndImpostorByLabel) {
  const std::vector<taconite::Embedding> e = {{1, 0}, {2, 0}, {0, 1}, {1, 1}};
  const PairScores s = score_all_pairs(e, {"a", "a", "b", "c"});
  ASSERT_EQ(s.genuine.size(), 1u);
  EXPECT_NEAR(s.genuine[0], 1.0, 1e-12);
  ASSERT_EQ(s.impostor.size(), 5u);  // (0,2) (0,3) (1,2) (1,3) (2,3)
  EXPECT_NEAR(s.impostor[0], 0.0, 1e-12);
  EXPECT_NEAR(s.impostor[1], 1 / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(s.impostor[4], 1 / std::sqrt(2.0), 1e-12);
  ASSERT_EQ(s.genuine_pairs.size(), 1u);
  EXPECT_EQ(s.genuine_pairs[0], std::make_pair(std::size_t{0}, std::size_t{1}));
  ASSERT_EQ(s.impostor_pairs.size(), 5u);
  EXPECT_EQ(s.impostor_pairs[4], std::make_pair(std::size_t{2}, std::size_t{3}));
}

TEST(VerificationScores, AThresholdAcceptsTheScoresEqualToIt) {
  const Rates r = rates_at(ten_impostors(), 0.5);
  EXPECT_DOUBLE_EQ(r.tar, 0.75);  // 0.55, 0.95, 1.2
  EXPECT_DOUBLE_EQ(r.far, 0.6);  // 0.5 .. 1.0
}

TEST(VerificationScores, TheThresholdAtAFarAcceptsNoMoreImpostorsThanAllowed) {
  const PairScores s = ten_impostors();
  const Rates tenth = at_far(s, 0.1);  // one impostor of ten allowed: 1.0 accepted, 0.9 not
  EXPECT_GT(tenth.threshold, 0.9);
  EXPECT_LT(tenth.threshold, 0.9 + 1e-12);
  EXPECT_DOUBLE_EQ(tenth.far, 0.1);
  EXPECT_DOUBLE_EQ(tenth.tar, 0.5);  // 0.95 and 1.2
  const Rates none = at_far(s, 0.05);  // none allowed: only scores above the best impostor pass
  EXPECT_GT(none.threshold, 1.0);
  EXPECT_DOUBLE_EQ(none.far, 0.0);
  EXPECT_DOUBLE_EQ(none.tar, 0.25);
  EXPECT_DOUBLE_EQ(at_far(s, 1.0).far, 1.0);  // everything allowed
}

TEST(VerificationScores, AreaUnderRocCountsOrderedPairsAndHalfTheTies) {
  EXPECT_DOUBLE_EQ(area_under_roc(scores_of({0.9, 0.8}, {0.1, 0.2})), 1.0);
  EXPECT_DOUBLE_EQ(area_under_roc(scores_of({0.1}, {0.9})), 0.0);
  EXPECT_DOUBLE_EQ(area_under_roc(scores_of({0.5}, {0.5})), 0.5);
  // 0.3: above 0.1 and 0.2, tied with 0.3 (2.5); 0.55: 5; 0.95: 9; 1.2: 10 -> 26.5 / 40
  EXPECT_DOUBLE_EQ(area_under_roc(ten_impostors()), 26.5 / 40);
}

TEST(VerificationScores, TheEqualErrorRateIsWhereRejectsAndAcceptsMeet) {
  // At 0.6 genuine 0.3 and 0.55 are rejected (FRR 2/4) and impostors 0.6 .. 1.0 accepted (FAR
  // 5/10); at 0.55 FRR 1/4, FAR 5/10; at 0.7 FRR 2/4, FAR 4/10.
  const EqualError e = equal_error(ten_impostors());
  EXPECT_DOUBLE_EQ(e.threshold, 0.6);
  EXPECT_DOUBLE_EQ(e.rate, 0.5);
  const EqualError separated = equal_error(scores_of({0.8, 0.9}, {0.1, 0.2}));
  EXPECT_DOUBLE_EQ(separated.rate, 0.0);
  EXPECT_DOUBLE_EQ(separated.threshold, 0.8);
}

TEST(VerificationScores, QuantilesInterpolateBetweenRanks) {
  const std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile(v, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 5);
}

TEST(PhotoList, PeopleAreFoldersAndEachImpostorIsItsOwnPerson) {
  const fs::path dir = fs::temp_directory_path() / ("taconite-photo-list-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* f : {"ann/2.JPG", "ann/1.png", "ann/notes.txt", "_impostors/x.jpeg", "_impostors/y.jpg", "loose.jpg"}) {
    fs::create_directories((dir / f).parent_path());
    std::ofstream(dir / f) << "x";
  }
  auto listed = list_photos(dir);
  fs::remove_all(dir);
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  const std::vector<Photo>& photos = listed.value();
  ASSERT_EQ(photos.size(), 4u);
  EXPECT_EQ(photos[0].relative, "_impostors/x.jpeg");
  EXPECT_EQ(photos[0].person, "_impostors/x.jpeg");
  EXPECT_EQ(photos[1].person, "_impostors/y.jpg");
  EXPECT_EQ(photos[2].relative, "ann/1.png");
  EXPECT_EQ(photos[2].person, "ann");
  EXPECT_EQ(photos[3].person, "ann");
}

TEST(PhotoList, AMissingDirectoryIsNamed) {
  auto listed = list_photos("/nonexistent-taconite-photos");
  ASSERT_FALSE(listed.ok());
  EXPECT_NE(listed.error().message.find("/nonexistent-taconite-photos"), std::string::npos);
}

// The largest face is the finder's first; a photo the finder cannot search or finds nothing in is
// an error saying so (the aligned finder needs no model file to show both).
TEST(LargestAlignedFace, IsTheFindersFirstFaceOrAnErrorSayingWhyNone) {
  taconite::faces::AlignedFaceFinder finder({4, 2, {}});
  cv::Mat bgr(2, 4, CV_8UC3, cv::Scalar(10, 20, 30));
  auto face = largest_aligned_face(finder, bgr);
  ASSERT_TRUE(face.ok()) << face.error().message;
  EXPECT_EQ(face.value().size(), cv::Size(4, 2));
  EXPECT_EQ(face.value().at<cv::Vec3b>(1, 3), cv::Vec3b(30, 20, 10));  // RGB
  auto other_size = largest_aligned_face(finder, cv::Mat(3, 3, CV_8UC3, cv::Scalar::all(0)));
  ASSERT_FALSE(other_size.ok());
  EXPECT_NE(other_size.error().message.find("not an aligned face"), std::string::npos);
}

}  // namespace
