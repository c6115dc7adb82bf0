// Exact top-k inner-product search that reads a quarter of the bytes: every template is also kept
// as int8 codes (one scale per template), the scan ranks the int8 scores, and only the templates
// whose float32 score could still be in the top k are scored again in float32. The re-check uses
// a proven bound on the int8 error, so the result is exactly the top k by the float32 scores this
// scan computes (simd_dot.hpp's dot product), not an approximation. Those scores can differ from
// another float32 search's (IndexFlatIP's) in the last bits (other summation order), so rows whose
// scores are that close, and exact ties (broken by the lower row here), may be ordered otherwise.
// A 100 k x 512 gallery is 51 MB of codes instead of 205 MB of floats: the scan is memory-bound,
// so this is what makes exact search of 100 k identities fit in ~10 ms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace taconite::gallery {

class ExactScan {
 public:
  // Codes for `rows` rows of `dim` finite floats (`vectors`, row-major). The floats are not copied:
  // they must stay alive and unchanged while the scan is used (GalleryIndex holds them).
  // `groups` (empty, or one per row: dense indices 0..G-1, e.g. the row's identity) makes top()
  // rank groups by their best row instead of rows.
  ExactScan(int dim, std::span<const float> vectors, std::vector<std::uint32_t> groups = {});

  // The `k` rows with the largest inner product with `query` (dim() floats), best first, as
  // (score, row); with groups, the best row of each of the `k` best groups. Fewer when there are
  // fewer rows (groups); none for a wrong-sized query or one holding NaN or Inf. Thread-safe.
  std::vector<std::pair<float, std::int64_t>> top(std::span<const float> query, std::size_t k) const;

  std::size_t rows() const { return scale_.size(); }

 private:
  int dim_ = 0;
  const float* vectors_ = nullptr;
  std::vector<std::int8_t> codes_;  // rows x dim, value = code * scale_[row]
  std::vector<float> scale_;        // per row: the code step
  std::vector<float> code_l1_;      // per row: scale * sum |code| (the L1 norm of the decoded row)
  std::vector<float> norm_;         // per row: its L2 norm
  std::vector<std::uint32_t> groups_;
  std::size_t group_count_ = 0;
};

}  // namespace taconite::gallery
