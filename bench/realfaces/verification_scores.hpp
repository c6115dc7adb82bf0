// 1:1 verification on a set of labelled embeddings: every pair scored by cosine (same person =
// genuine, different = impostor), and what the two score distributions give: AUC, the threshold
// and true-accept rate at a false-accept rate, the equal error rate, percentiles. A pair is
// accepted when its score is >= the threshold, the rule taconiteidentify applies ("unknown below
// the threshold"). Shared by the real-face bench and tests.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "taconite/model.hpp"

namespace taconite::realfaces {

struct PairScores {
  std::vector<double> genuine;
  std::vector<double> impostor;
  // score_all_pairs: the positions (i, j) of genuine[k] and impostor[k] in the embeddings
  std::vector<std::pair<std::size_t, std::size_t>> genuine_pairs, impostor_pairs;
};

// Cosine of every pair i < j of `embeddings` (labels[i] names embeddings[i]'s person; the two have
// the same size): O(n^2 * dim) work for the caller's n.
PairScores score_all_pairs(const std::vector<Embedding>& embeddings, const std::vector<std::string>& labels);

struct Rates {
  double threshold = 0.0;
  double tar = 0.0;  // share of genuine pairs scoring >= threshold
  double far = 0.0;  // share of impostor pairs scoring >= threshold
};

// Rates at `threshold`.
Rates rates_at(const PairScores& scores, double threshold);

// The lowest threshold at which at most `far` of the impostor pairs are accepted (just above the
// impostor score ranked floor(far * impostors) + 1 from the top), with its rates. Needs impostors.
Rates at_far(const PairScores& scores, double far);

struct EqualError {
  double threshold = 0.0;
  double rate = 0.0;  // (FRR + FAR) / 2 at the threshold
};

// Where the false-reject and false-accept rates cross: the threshold among the scores minimising
// |FRR - FAR|. Needs both kinds of pairs.
EqualError equal_error(const PairScores& scores);

// P(genuine score > impostor score), ties counted half. Needs both kinds of pairs.
double area_under_roc(const PairScores& scores);

// The q-quantile (0..1, linear between ranks) of `values` (not empty).
double quantile(std::vector<double> values, double q);

}  // namespace taconite::realfaces
