#include "calibration.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace taconite::gallery {

namespace {

Result<bool> check_scores(std::span<const GenuineProbe> genuine, std::span<const float> impostors) {
  for (std::size_t i = 0; i < genuine.size(); ++i)
    if (!std::isfinite(genuine[i].true_best) || (genuine[i].wrong_best && !std::isfinite(*genuine[i].wrong_best)))
      return Error{ErrorKind::Input, "genuine probe #" + std::to_string(i) + ": its score is not a finite number"};
  for (std::size_t i = 0; i < impostors.size(); ++i)
    if (!std::isfinite(impostors[i]))
      return Error{ErrorKind::Input, "impostor #" + std::to_string(i) + ": its score is not a finite number"};
  return true;
}

double rate(std::size_t part, std::size_t whole) { return whole ? static_cast<double>(part) / whole : 0.0; }

Calibration count_at(std::span<const GenuineProbe> genuine, std::span<const float> impostors, double threshold) {
  Calibration c;
  c.threshold = threshold;
  CalibrationCounts& n = c.counts;
  n.genuine = genuine.size();
  for (const GenuineProbe& p : genuine) {
    // A tie between its own identity and another is not a right name: which one the search
    // returns first is not the probe's to decide.
    const bool own_on_top = !p.wrong_best || p.true_best > *p.wrong_best;
    const double top = own_on_top ? p.true_best : *p.wrong_best;
    if (top < threshold)
      ++n.unnamed;
    else if (own_on_top)
      ++n.named_right;
    else
      ++n.named_wrong;
  }
  n.impostors = impostors.size();
  for (float s : impostors) n.impostors_named += s >= threshold ? 1 : 0;
  c.fpir = rate(n.impostors_named, n.impostors);
  c.tpir = rate(n.named_right, n.genuine);
  return c;
}

}  // namespace

Result<Calibration> evaluate_threshold(std::span<const GenuineProbe> genuine, std::span<const float> impostors,
                                       double threshold) {
  if (std::isnan(threshold)) return Error{ErrorKind::Input, "the threshold is not a number"};
  if (Result<bool> ok = check_scores(genuine, impostors); !ok) return ok.error();
  return count_at(genuine, impostors, threshold);
}

Result<Calibration> calibrate_threshold(std::span<const GenuineProbe> genuine, std::span<const float> impostors,
                                        double target_fpir) {
  if (!(target_fpir >= 0.0 && target_fpir <= 1.0))
    return Error{ErrorKind::Input, "the target FPIR must be a rate in [0, 1]"};
  if (Result<bool> ok = check_scores(genuine, impostors); !ok) return ok.error();
  const std::size_t m = impostors.size();
  // The most impostors that may be named: the largest a with a / m <= target, computed as the
  // FPIR is reported (a product like 0.29 * 100 rounds below 29).
  std::size_t allowed = m ? static_cast<std::size_t>(std::floor(target_fpir * static_cast<double>(m))) : 0;
  while (allowed < m && rate(allowed + 1, m) <= target_fpir) ++allowed;
  while (allowed > 0 && rate(allowed, m) > target_fpir) --allowed;
  if (allowed >= m) return count_at(genuine, impostors, kLowestThreshold);
  // The threshold must lie above the (allowed + 1)-th best impostor score; the lowest grid value that does.
  std::vector<float> sorted(impostors.begin(), impostors.end());
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(allowed), sorted.end(),
                   std::greater<float>());
  const double above = sorted[allowed];
  auto grid = [](long long k) { return static_cast<double>(k) / kThresholdSteps; };  // as "%.4f" reads back
  long long k = static_cast<long long>(std::floor(above * kThresholdSteps)) + 1;
  while (grid(k - 1) > above) --k;
  while (grid(k) <= above) ++k;
  const double threshold = std::max(grid(k), kLowestThreshold);
  if (threshold > kHighestThreshold)
    return Error{ErrorKind::Input, "impostors score up to " + std::to_string(above) +
                                       ": no threshold in [-1, 1] keeps the FPIR at or below the target (is an enrolled face among "
                                       "the impostors?)"};
  return count_at(genuine, impostors, threshold);
}

}  // namespace taconite::gallery
