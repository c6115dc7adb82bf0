// The scores calibration.hpp works on, computed by exact search of a gallery's templates as
// taconiteidentify scores a face (an identity's score: its best template's cosine; ExactScan, the
// exact search GalleryIndex uses). Genuine probes are leave-one-out: each template against every
// other template, its own removed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "calibration.hpp"

namespace taconite::gallery {

// Leave-one-out is one search of the whole gallery per probe (O(n^2) for n templates): above this
// many eligible templates the probes are a deterministic, evenly spaced sample of them. Measured:
// 10 000 probes of a 20 000 x 128 gallery, 5.6 s of CPU (AMD EPYC Zen 3, AVX2); ~2 min extrapolated
// for 100 000 x 512.
inline constexpr std::size_t kMaxGenuineProbes = 10000;

struct LeaveOneOut {
  std::vector<GenuineProbe> probes;
  std::size_t eligible = 0;  // templates whose identity has >= 2 (probes.size() unless sampled)
};

class OpenSetScores {
 public:
  // Over `rows` x `dim` unit embeddings (row-major), row i of identity identity_ids[i]. Input error
  // for mismatched sizes, a dimension < 1, or a row holding NaN or Inf.
  static Result<OpenSetScores> build(int dim, std::vector<float> unit_rows, std::vector<std::int64_t> identity_ids);

  // Every row whose identity has at least 2 rows as a genuine probe (at most max_probes, evenly
  // spaced by row when there are more).
  LeaveOneOut leave_one_out(std::size_t max_probes = kMaxGenuineProbes) const;

  // The best identity's score for `embedding` (dim() values, normalised here); none for a
  // wrong-sized embedding, one holding NaN or Inf or of zero length, or an empty gallery.
  std::optional<float> best_score(std::span<const float> embedding) const;

  int dim() const;

  OpenSetScores(OpenSetScores&&) noexcept;
  OpenSetScores& operator=(OpenSetScores&&) noexcept;
  ~OpenSetScores();

 private:
  struct State;
  explicit OpenSetScores(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace taconite::gallery
