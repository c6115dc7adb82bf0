// gallery/calibration.hpp's threshold arithmetic on exact cases, and gallery/open_set_scores.hpp's
// leave-one-out scores on hand-made embeddings whose cosines are known.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "open_set_scores.hpp"

namespace {

using taconite::gallery::calibrate_threshold;
using taconite::gallery::evaluate_threshold;
using taconite::gallery::GenuineProbe;
using taconite::gallery::OpenSetScores;

const std::vector<GenuineProbe> kNoGenuine;

TEST(Calibration, EmptySetsGiveTheLowestThresholdAndZeroRates) {
  auto c = calibrate_threshold({}, {}, 0.01);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c.value().threshold, -1.0);
  EXPECT_EQ(c.value().fpir, 0.0);
  EXPECT_EQ(c.value().tpir, 0.0);
  EXPECT_EQ(c.value().counts.genuine, 0u);
  EXPECT_EQ(c.value().counts.impostors, 0u);
}

TEST(Calibration, FpirZeroPutsTheThresholdJustAboveTheBestImpostor) {
  const std::vector<float> impostors = {0.3f, 0.5f, 0.2f};
  auto c = calibrate_threshold(kNoGenuine, impostors, 0.0);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c.value().threshold, 0.5001);
  EXPECT_EQ(c.value().counts.impostors_named, 0u);
  EXPECT_EQ(c.value().fpir, 0.0);
  // Strictly above: an impostor exactly on a grid value is not named at the next one.
  auto on_grid = calibrate_threshold(kNoGenuine, std::vector<float>{0.25f}, 0.0);
  ASSERT_TRUE(on_grid.ok());
  EXPECT_DOUBLE_EQ(on_grid.value().threshold, 0.2501);
  auto negative = calibrate_threshold(kNoGenuine, std::vector<float>{-0.5f}, 0.0);
  ASSERT_TRUE(negative.ok());
  EXPECT_DOUBLE_EQ(negative.value().threshold, -0.4999);
}

TEST(Calibration, FpirOneNamesEveryImpostorAtTheLowestThreshold) {
  const std::vector<float> impostors = {0.9f, -0.2f};
  auto c = calibrate_threshold(kNoGenuine, impostors, 1.0);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().threshold, -1.0);
  EXPECT_EQ(c.value().counts.impostors_named, 2u);
  EXPECT_EQ(c.value().fpir, 1.0);
}

TEST(Calibration, TheAllowedShareOfImpostorsIsNamedAndNoMore) {
  const std::vector<float> impostors = {0.1f, 0.2f, 0.3f, 0.4f};
  auto c = calibrate_threshold(kNoGenuine, impostors, 0.5);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c.value().threshold, 0.2001);
  EXPECT_EQ(c.value().counts.impostors_named, 2u);
  EXPECT_EQ(c.value().fpir, 0.5);
  // 0.29 * 100 is 28.999... in doubles: still 29 of 100 impostors may be named.
  std::vector<float> hundred;
  for (int i = 0; i < 100; ++i) hundred.push_back(static_cast<float>(i) / 1000.0f);
  auto rounded = calibrate_threshold(kNoGenuine, hundred, 0.29);
  ASSERT_TRUE(rounded.ok());
  EXPECT_EQ(rounded.value().counts.impostors_named, 29u);
  EXPECT_LE(rounded.value().fpir, 0.29);
}

TEST(Calibration, TiedImpostorsAreNamedTogetherOrNotAtAll) {
  // Two may be named, but three share the score: a threshold naming two does not exist.
  auto c = calibrate_threshold(kNoGenuine, std::vector<float>{0.4f, 0.4f, 0.4f, 0.1f}, 0.5);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c.value().threshold, 0.4001);
  EXPECT_EQ(c.value().counts.impostors_named, 0u);
  // All equal.
  auto equal = calibrate_threshold(kNoGenuine, std::vector<float>(10, 0.3f), 0.99);
  ASSERT_TRUE(equal.ok());
  EXPECT_DOUBLE_EQ(equal.value().threshold, 0.3001);
  EXPECT_EQ(equal.value().counts.impostors_named, 0u);
}

TEST(Calibration, GenuineProbesAreNamedRightWrongOrNotAtAll) {
  const std::vector<GenuineProbe> genuine = {
      {0.8f, 0.3f},           // right
      {0.3f, 0.6f},           // wrong: another identity on top, above the threshold
      {0.45f, 0.45f},         // a tie is not a right name: wrong
      {0.7f, std::nullopt},   // right: no other identity
      {0.2f, 0.1f},           // unnamed: below the threshold
      {0.3f, 0.35f},          // unnamed: another on top, but below
  };
  auto c = evaluate_threshold(genuine, {}, 0.4);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().counts.named_right, 2u);
  EXPECT_EQ(c.value().counts.named_wrong, 2u);
  EXPECT_EQ(c.value().counts.unnamed, 2u);
  EXPECT_DOUBLE_EQ(c.value().tpir, 2.0 / 6.0);
  // At a threshold equal to a score the face is named (taconiteidentify: similarity >= threshold).
  auto at = evaluate_threshold(std::vector<GenuineProbe>{{0.5f, 0.1f}}, std::vector<float>{0.5f}, 0.5f);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(at.value().counts.named_right, 1u);
  EXPECT_EQ(at.value().counts.impostors_named, 1u);
}

TEST(Calibration, NanScoresAndBadTargetsAreRefused) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto impostor = calibrate_threshold(kNoGenuine, std::vector<float>{0.1f, nan}, 0.01);
  ASSERT_FALSE(impostor.ok());
  EXPECT_NE(impostor.error().message.find("impostor #1"), std::string::npos) << impostor.error().message;
  auto genuine = calibrate_threshold(std::vector<GenuineProbe>{{0.5f, inf}}, {}, 0.01);
  ASSERT_FALSE(genuine.ok());
  EXPECT_NE(genuine.error().message.find("genuine probe #0"), std::string::npos) << genuine.error().message;
  EXPECT_FALSE(calibrate_threshold(std::vector<GenuineProbe>{{nan, 0.1f}}, {}, 0.01).ok());
  for (double target : {-0.01, 1.01, std::nan("")}) EXPECT_FALSE(calibrate_threshold({}, {}, target).ok()) << target;
  EXPECT_FALSE(evaluate_threshold({}, {}, std::nan("")).ok());
  // Only a threshold above 1 would keep this impostor unnamed.
  EXPECT_FALSE(calibrate_threshold(kNoGenuine, std::vector<float>{1.0f}, 0.0).ok());
}

TEST(Calibration, TheThresholdPrintedWithFourDecimalsIsTheThresholdMeasured) {
  for (float best : {0.41659f, 0.33333334f, -0.99995f, 0.0f, 0.99989998f}) {
    auto c = calibrate_threshold(kNoGenuine, std::vector<float>{best}, 0.0);
    ASSERT_TRUE(c.ok()) << best;
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", c.value().threshold);
    EXPECT_EQ(std::stod(text), c.value().threshold) << best;
    EXPECT_GT(c.value().threshold, best);
    EXPECT_LE(c.value().threshold - best, 1e-4 + 1e-9);
  }
}

// Identities A (2 rows), B (1 row), C (2 rows) in 3-d: every cosine is a chosen value.
OpenSetScores three_identities() {
  std::vector<float> rows = {1, 0, 0, 0.8f, 0.6f, 0, 0, 1, 0, 0, 0, 1, 0.6f, 0, 0.8f};
  auto scores = OpenSetScores::build(3, rows, {7, 7, 9, 4, 4});
  EXPECT_TRUE(scores.ok()) << scores.error().message;
  return std::move(scores.value());
}

TEST(OpenSetScores, LeaveOneOutScoresEachTemplateAgainstTheOthers) {
  const OpenSetScores scores = three_identities();
  const auto loo = scores.leave_one_out();
  EXPECT_EQ(loo.eligible, 4u);  // B's one template gives no genuine probe
  ASSERT_EQ(loo.probes.size(), 4u);
  const float expected_wrong[] = {0.6f, 0.6f, 0.0f, 0.6f};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(loo.probes[i].true_best, 0.8f) << i;  // never its own 1.0
    ASSERT_TRUE(loo.probes[i].wrong_best.has_value()) << i;
    EXPECT_NEAR(*loo.probes[i].wrong_best, expected_wrong[i], 1e-6) << i;
  }
  // A sample: evenly spaced over the eligible rows.
  const auto sampled = scores.leave_one_out(2);
  EXPECT_EQ(sampled.eligible, 4u);
  ASSERT_EQ(sampled.probes.size(), 2u);
  EXPECT_NEAR(*sampled.probes[0].wrong_best, 0.6f, 1e-6);  // row 0 (A)
  EXPECT_NEAR(*sampled.probes[1].wrong_best, 0.0f, 1e-6);  // row 3 (C)
}

TEST(OpenSetScores, BestScoreNormalisesAndRefusesWhatCannotBeScored) {
  const OpenSetScores scores = three_identities();
  EXPECT_FLOAT_EQ(scores.best_score(std::vector<float>{2, 0, 0}).value_or(-2), 1.0f);
  EXPECT_NEAR(scores.best_score(std::vector<float>{0, -1, 0}).value_or(-2), 0.0f, 1e-6);  // best of 0, -0.6, 0, 0
  EXPECT_FALSE(scores.best_score(std::vector<float>{0, 0, 0}).has_value());
  EXPECT_FALSE(scores.best_score(std::vector<float>{std::nanf(""), 0, 0}).has_value());
  EXPECT_FALSE(scores.best_score(std::vector<float>{1, 0}).has_value());
}

TEST(OpenSetScores, OneIdentityHasNoWrongScoreAndBadRowsAreRefused) {
  auto one = OpenSetScores::build(2, {1, 0, 0, 1}, {1, 1});
  ASSERT_TRUE(one.ok());
  const auto loo = one.value().leave_one_out();
  ASSERT_EQ(loo.probes.size(), 2u);
  EXPECT_FALSE(loo.probes[0].wrong_best.has_value());
  EXPECT_NEAR(loo.probes[0].true_best, 0.0f, 1e-6);
  EXPECT_FALSE(OpenSetScores::build(2, {1, 0, 0}, {1, 1}).ok());
  EXPECT_FALSE(OpenSetScores::build(2, {1, std::nanf("")}, {1}).ok());
  EXPECT_FALSE(OpenSetScores::build(0, {}, {}).ok());
}

}  // namespace
