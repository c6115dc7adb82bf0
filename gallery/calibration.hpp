// Open-set calibration of the match threshold: from genuine probes (a gallery template searched
// against the rest of the gallery) and impostor probes (faces of people not enrolled), scored as
// taconiteidentify decides (an identity's score is its best template's cosine; a face is named
// when the best identity's score >= threshold), the lowest threshold that keeps the
// false-positive identification rate (FPIR: impostors named) at or below a target, and what it
// costs: the true-positive identification rate (TPIR: genuine probes named right). Pure arithmetic,
// no gallery access (open_set_scores.hpp computes the scores).
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "taconite/error.hpp"

namespace taconite::gallery {

// A genuine probe's two scores.
struct GenuineProbe {
  float true_best = 0.0f;            // its own identity's best other template
  std::optional<float> wrong_best;   // the best other identity (none in a one-identity gallery)
};

struct CalibrationCounts {
  std::size_t genuine = 0;
  std::size_t named_right = 0;  // its identity is the top-1 (strictly above every other) and >= threshold
  std::size_t named_wrong = 0;  // another identity is the top-1 (or ties with its own) and >= threshold
  std::size_t unnamed = 0;      // the top-1 is below the threshold
  std::size_t impostors = 0;
  std::size_t impostors_named = 0;  // best score >= threshold
};

struct Calibration {
  double threshold = 0.0;
  double fpir = 0.0;  // impostors_named / impostors; 0 without impostors
  double tpir = 0.0;  // named_right / genuine; 0 without genuine probes
  CalibrationCounts counts;
};

inline constexpr double kDefaultTargetFpir = 0.01;
// Thresholds are whole multiples of 1 / kThresholdSteps in taconiteidentify's range [-1, 1], so
// the threshold printed with 4 decimals is the threshold measured.
inline constexpr int kThresholdSteps = 10000;
inline constexpr double kLowestThreshold = -1.0, kHighestThreshold = 1.0;

// The counts at `threshold`. Input error for a NaN or infinite score (naming the probe) or a
// threshold that is not a number.
Result<Calibration> evaluate_threshold(std::span<const GenuineProbe> genuine, std::span<const float> impostors,
                                       double threshold);

// The lowest threshold (a multiple of 1 / kThresholdSteps, >= kLowestThreshold) with FPIR <= target_fpir,
// and the counts there. Without impostors every threshold meets any target: kLowestThreshold.
// Input error for a target outside [0, 1] (or NaN), a NaN or infinite score, or impostor scores so
// high that only a threshold above kHighestThreshold would meet the target.
Result<Calibration> calibrate_threshold(std::span<const GenuineProbe> genuine, std::span<const float> impostors,
                                        double target_fpir);

}  // namespace taconite::gallery
