// A PNG of genuine and impostor cosine-score histograms, one panel per model, each kind's bars as a
// share of its own pairs (impostor pairs outnumber genuine ones 30 to 1), with the recommended
// threshold marked: the picture of how far apart a model keeps people.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "verification_scores.hpp"

namespace taconite::realfaces {

struct HistogramPanel {
  std::string title;
  const PairScores* scores = nullptr;
  double threshold = 0.0;
};

// Writes the panels (at least one) to `png`; an error names the file when it cannot be written.
std::string write_score_histograms(const std::vector<HistogramPanel>& panels, const std::filesystem::path& png);

}  // namespace taconite::realfaces
