// Best-shot quality: each cue orders faces the way a recogniser would (frontal over turned, sharp
// over blurred, large over small), and the combination follows them.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "face_quality.hpp"

using taconite::vision::assess_face;
using taconite::vision::estimate_pose;
using taconite::vision::FaceQuality;
using taconite::vision::laplacian_variance;
using taconite::vision::NormStatistics;
using taconite::vision::pose_score;
using taconite::vision::size_score;

namespace {

// The 112x112 template's points scaled by `scale` about its centre, the nose moved sideways by
// `nose_dx` and down by `nose_dy` (template pixels), the whole rotated by `roll` degrees.
std::array<cv::Point2d, 5> face(double scale = 1.0, double nose_dx = 0.0, double nose_dy = 0.0, double roll = 0.0) {
  std::array<cv::Point2d, 5> p = {{{38.2946, 51.6963}, {73.5318, 51.5014}, {56.0252, 71.7366},
                                   {41.5493, 92.3655}, {70.7299, 92.2041}}};
  p[2] += cv::Point2d(nose_dx, nose_dy);
  const double c = std::cos(roll * M_PI / 180.0), s = std::sin(roll * M_PI / 180.0);
  for (cv::Point2d& q : p) {
    const cv::Point2d r = (q - cv::Point2d(56, 56)) * scale;
    q = cv::Point2d(300 + c * r.x - s * r.y, 200 + s * r.x + c * r.y);
  }
  return p;
}

// A textured 112x112 input (a face-like pattern of edges), optionally blurred, as normalised CHW.
// A bundle's normalisation (cvlface) and an ONNX embedder's (ImageNet mean and std, per plane).
constexpr taconite::vision::PixelNormalisation kCvlface{taconite::vision::ChannelOrder::Rgb, {0.5f, 0.5f, 0.5f},
                                                         {0.5f, 0.5f, 0.5f}};
constexpr taconite::vision::PixelNormalisation kImageNet{
    taconite::vision::ChannelOrder::Rgb, {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};

std::vector<float> input(double blur_sigma, const taconite::vision::PixelNormalisation& norm = kCvlface) {
  cv::Mat image(112, 112, CV_8UC3, cv::Scalar(120, 110, 100));
  for (int i = 0; i < 12; ++i)
    cv::rectangle(image, cv::Rect(8 * i, 5 * i, 20, 30), cv::Scalar(30 + 18 * i, 200 - 12 * i, 90), -1);
  cv::circle(image, {40, 50}, 9, cv::Scalar::all(20), -1);
  cv::circle(image, {72, 50}, 9, cv::Scalar::all(20), -1);
  if (blur_sigma > 0) cv::GaussianBlur(image, image, cv::Size(), blur_sigma);
  std::vector<float> chw(3 * 112 * 112);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 112; ++y)
      for (int x = 0; x < 112; ++x)
        chw[(c * 112 + y) * 112 + x] = (image.at<cv::Vec3b>(y, x)[c] / 255.0f - norm.mean[c]) / norm.std_dev[c];
  return chw;
}

FaceQuality assess(const std::array<cv::Point2d, 5>& points, double blur = 0.0) {
  const std::vector<float> chw = input(blur);
  return assess_face(0.0, points, chw, 112, 112, kCvlface);
}

}  // namespace

TEST(FaceQuality, TheTemplateIsFrontal) {
  const auto pose = estimate_pose(face());
  ASSERT_TRUE(pose);
  EXPECT_NEAR(pose->yaw, 0.0, 1.0);
  EXPECT_NEAR(pose->pitch, 0.0, 1.0);
  EXPECT_NEAR(pose->roll, 0.0, 1.0);
  EXPECT_GT(pose_score(*pose), 0.99);
}

TEST(FaceQuality, TurnedFacesScoreLowerThanFrontalOnes) {
  const auto frontal = estimate_pose(face());
  const auto slightly = estimate_pose(face(1.0, 6.0));
  const auto turned = estimate_pose(face(1.0, 14.0));
  const auto other_way = estimate_pose(face(1.0, -14.0));
  ASSERT_TRUE(frontal && slightly && turned && other_way);
  EXPECT_GT(turned->yaw, slightly->yaw);
  EXPECT_GT(slightly->yaw, 5.0);
  EXPECT_LT(other_way->yaw, -turned->yaw + 1.0);
  EXPECT_GT(pose_score(*frontal), pose_score(*slightly));
  EXPECT_GT(pose_score(*slightly), pose_score(*turned));
  EXPECT_NEAR(pose_score(*turned), pose_score(*other_way), 1e-9);
  EXPECT_GT(assess(face()).score, assess(face(1.0, 14.0)).score);
}

TEST(FaceQuality, PitchComesFromTheNoseBetweenEyesAndMouth) {
  const auto down = estimate_pose(face(1.0, 0.0, 8.0));
  const auto up = estimate_pose(face(1.0, 0.0, -8.0));
  ASSERT_TRUE(down && up);
  EXPECT_GT(down->pitch, 10.0);
  EXPECT_LT(up->pitch, -10.0);
  EXPECT_LT(pose_score(*down), pose_score(*estimate_pose(face())));
}

TEST(FaceQuality, RollIsMeasuredButOnlyLargeRollCosts) {
  const auto rolled = estimate_pose(face(1.0, 0.0, 0.0, 20.0));
  const auto lying = estimate_pose(face(1.0, 0.0, 0.0, 70.0));
  ASSERT_TRUE(rolled && lying);
  EXPECT_NEAR(rolled->roll, 20.0, 0.5);
  EXPECT_NEAR(rolled->yaw, 0.0, 1.0);  // measured in the eye line's frame
  EXPECT_GT(pose_score(*rolled), 0.99);
  EXPECT_LT(pose_score(*lying), 0.5);
}

// The sharpness is measured on the pixels, whatever normalisation the model's input has: the same
// image normalised for an ONNX embedder (ImageNet mean/std) has the variance of its cvlface input.
TEST(FaceQuality, SharpnessUndoesTheModelsNormalisation) {
  const double cvlface = laplacian_variance(input(1.5, kCvlface), 112, 112, kCvlface);
  const double imagenet = laplacian_variance(input(1.5, kImageNet), 112, 112, kImageNet);
  ASSERT_GT(cvlface, 1.0);
  EXPECT_NEAR(imagenet, cvlface, 1e-3 * cvlface);
  // Read with the wrong normalisation the same input measures otherwise (what a fixed 0.5/0.5 did).
  EXPECT_GT(std::abs(laplacian_variance(input(1.5, kImageNet), 112, 112, kCvlface) - cvlface), 0.1 * cvlface);
}

TEST(FaceQuality, SharpInputsScoreHigherThanBlurredOnes) {
  const double sharp = laplacian_variance(input(0.0), 112, 112, kCvlface);
  const double soft = laplacian_variance(input(1.5), 112, 112, kCvlface);
  const double blurred = laplacian_variance(input(4.0), 112, 112, kCvlface);
  EXPECT_GT(sharp, soft);
  EXPECT_GT(soft, blurred);
  EXPECT_GT(assess(face(), 0.0).sharpness, assess(face(), 4.0).sharpness);
  EXPECT_GT(assess(face(), 0.0).score, assess(face(), 4.0).score);
}

TEST(FaceQuality, LargerFacesScoreHigherUpToTheTemplateSize) {
  EXPECT_LT(size_score(0, face(0.25)), size_score(0, face(0.5)));
  EXPECT_LT(size_score(0, face(0.5)), size_score(0, face(1.0)));
  EXPECT_DOUBLE_EQ(size_score(0, face(1.0)), size_score(0, face(3.0)));  // more pixels than the network takes
  EXPECT_NEAR(size_score(0, face(0.5)), 0.5, 0.01);
  EXPECT_GT(assess(face(1.0)).score, assess(face(0.3)).score);
  // Without landmarks the box width stands in.
  EXPECT_LT(size_score(40, {}), size_score(80, {}));
  // A turned head keeps its size: the eye-to-mouth height does not shrink with yaw.
  auto turned = face();
  turned[0].x += 8, turned[1].x -= 8;
  EXPECT_NEAR(size_score(0, turned), size_score(0, face()), 0.01);
}

TEST(FaceQuality, ImpossibleLandmarksGiveNoPoseAndNoCrash) {
  auto same = face();
  same[1] = same[0];
  EXPECT_FALSE(estimate_pose(same));
  auto nan = face();
  nan[2].x = NAN;
  EXPECT_FALSE(estimate_pose(nan));
  EXPECT_EQ(size_score(0, nan), 0.0);
  auto mouth_above = face();
  mouth_above[3].y = mouth_above[4].y = 10;  // above the eye line
  EXPECT_FALSE(estimate_pose(mouth_above));
  EXPECT_FALSE(estimate_pose(std::span<const cv::Point2d>(face().data(), 3)));
  const std::vector<float> wrong(10, 0.0f);
  EXPECT_EQ(laplacian_variance(wrong, 112, 112, kCvlface), 0.0);
  const FaceQuality q = assess_face(NAN, {}, {}, 112, 112, kCvlface);
  EXPECT_TRUE(std::isfinite(q.score));
  EXPECT_GE(q.score, 0.0);
}

TEST(FaceQuality, TheNormFactorFollowsTheStreamsNorms) {
  NormStatistics stats;
  EXPECT_EQ(stats.factor(20.0), 0.75);  // nothing seen yet: neutral
  for (double n : {18.0, 22.0, 19.0, 21.0, 20.0, 18.5, 21.5, 20.5, 19.5}) stats.add(n);
  EXPECT_EQ(stats.factor(24.0), 0.75) << "nine norms are too few to judge by";
  stats.add(20.0);
  EXPECT_GT(stats.factor(24.0), stats.factor(20.0));
  EXPECT_GT(stats.factor(20.0), stats.factor(15.0));
  EXPECT_LE(stats.factor(1e9), 1.0);
  EXPECT_GE(stats.factor(0.0), 0.5);
  stats.add(NAN);
  EXPECT_TRUE(std::isfinite(stats.factor(20.0)));
}
