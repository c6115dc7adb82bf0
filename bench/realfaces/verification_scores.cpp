#include "verification_scores.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace taconite::realfaces {

PairScores score_all_pairs(const std::vector<Embedding>& embeddings, const std::vector<std::string>& labels) {
  PairScores scores;
  for (std::size_t i = 0; i < embeddings.size(); ++i)
    for (std::size_t j = i + 1; j < embeddings.size(); ++j) {
      const bool genuine = labels[i] == labels[j];
      (genuine ? scores.genuine : scores.impostor).push_back(cosine(embeddings[i], embeddings[j]));
      (genuine ? scores.genuine_pairs : scores.impostor_pairs).emplace_back(i, j);
    }
  return scores;
}

namespace {

double share_at_least(const std::vector<double>& values, double threshold) {
  if (values.empty()) return 0.0;
  const auto accepted = std::count_if(values.begin(), values.end(), [&](double v) { return v >= threshold; });
  return static_cast<double>(accepted) / static_cast<double>(values.size());
}

}  // namespace

Rates rates_at(const PairScores& scores, double threshold) {
  return {threshold, share_at_least(scores.genuine, threshold), share_at_least(scores.impostor, threshold)};
}

Rates at_far(const PairScores& scores, double far) {
  std::vector<double> impostor = scores.impostor;
  std::sort(impostor.begin(), impostor.end(), std::greater<>());
  const auto allowed = static_cast<std::size_t>(std::floor(far * static_cast<double>(impostor.size())));
  // Accepting scores above the impostor at rank `allowed` (0-based) accepts at most `allowed`.
  const double threshold = allowed < impostor.size()
                               ? std::nextafter(impostor[allowed], std::numeric_limits<double>::infinity())
                               : -1.0;
  return rates_at(scores, threshold);
}

EqualError equal_error(const PairScores& scores) {
  std::vector<double> candidates = scores.genuine;
  candidates.insert(candidates.end(), scores.impostor.begin(), scores.impostor.end());
  std::sort(candidates.begin(), candidates.end());
  std::vector<double> genuine = scores.genuine, impostor = scores.impostor;
  std::sort(genuine.begin(), genuine.end());
  std::sort(impostor.begin(), impostor.end());
  EqualError best;
  double best_gap = std::numeric_limits<double>::infinity();
  for (double t : candidates) {  // sorted: the rates are counted by binary search
    const double frr = static_cast<double>(std::lower_bound(genuine.begin(), genuine.end(), t) - genuine.begin()) /
                       static_cast<double>(genuine.size());
    const double far = static_cast<double>(impostor.end() - std::lower_bound(impostor.begin(), impostor.end(), t)) /
                       static_cast<double>(impostor.size());
    if (std::abs(frr - far) < best_gap) {
      best_gap = std::abs(frr - far);
      best = {t, (frr + far) / 2};
    }
  }
  return best;
}

double area_under_roc(const PairScores& scores) {
  std::vector<double> impostor = scores.impostor;
  std::sort(impostor.begin(), impostor.end());
  double wins = 0.0;
  for (double g : scores.genuine) {
    const auto below = std::lower_bound(impostor.begin(), impostor.end(), g);
    const auto tied_end = std::upper_bound(below, impostor.end(), g);
    wins += static_cast<double>(below - impostor.begin()) + 0.5 * static_cast<double>(tied_end - below);
  }
  return wins / (static_cast<double>(scores.genuine.size()) * static_cast<double>(impostor.size()));
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
}

}  // namespace taconite::realfaces
