#include "exact_scan.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "simd_dot.hpp"

namespace taconite::gallery {

namespace {

constexpr float kCodeMax = 127.0f;     // int8 codes in [-127, 127]
constexpr float kQueryMax = 32767.0f;  // int16 query in [-32767, 32767]

// A float sum of n products rounds off by at most n * epsilon * sum |q_i v_i| <= n * epsilon * |q| |v|
// (Cauchy-Schwarz); twice that covers both scores compared (int8 score and float32 re-score).
float rounding_bound(std::size_t n, float query_norm, float row_norm) {
  return 2.0f * static_cast<float>(n) * std::numeric_limits<float>::epsilon() * query_norm * row_norm;
}

}  // namespace

ExactScan::ExactScan(int dim, std::span<const float> vectors, std::vector<std::uint32_t> groups)
    : dim_(dim),
      vectors_(vectors.data()),
      codes_(vectors.size()),
      scale_(vectors.size() / static_cast<std::size_t>(dim)),
      code_l1_(scale_.size()),
      norm_(scale_.size()),
      groups_(std::move(groups)) {
  if (groups_.size() != scale_.size()) groups_.clear();
  for (std::uint32_t g : groups_) group_count_ = std::max<std::size_t>(group_count_, std::size_t{g} + 1);
  const auto d = static_cast<std::size_t>(dim);
  for (std::size_t row = 0; row < scale_.size(); ++row) {
    const float* v = vectors_ + row * d;
    float largest = 0.0f;
    double squares = 0.0;
    for (std::size_t i = 0; i < d; ++i) {
      largest = std::max(largest, std::fabs(v[i]));
      squares += static_cast<double>(v[i]) * v[i];
    }
    const float scale = largest > 0.0f ? largest / kCodeMax : 1.0f;
    double l1 = 0.0;
    for (std::size_t i = 0; i < d; ++i) {
      const float code = std::clamp(std::nearbyint(v[i] / scale), -kCodeMax, kCodeMax);
      codes_[row * d + i] = static_cast<std::int8_t>(code);
      l1 += std::fabs(code);
    }
    scale_[row] = scale;
    code_l1_[row] = static_cast<float>(l1 * scale);
    norm_[row] = static_cast<float>(std::sqrt(squares));
  }
}

// With q = query, v = row, s = row scale, t = query step and c, p their codes:
//   q.v - t*s*(p.c) = q.(v - s*c) + (q - t*p).(s*c)
//   |...| <= |q|_1 * s/2 + t/2 * |s*c|_1
// so each row's float32 score lies within `bound` of its int8 score. Each of the float32 top k
// rows (groups) scores at least the k-th largest lower bound (of a group: of its best row), so
// re-scoring every row whose upper bound reaches it finds them all.
std::vector<std::pair<float, std::int64_t>> ExactScan::top(std::span<const float> query, std::size_t k) const {
  const std::size_t n = rows();
  const auto d = static_cast<std::size_t>(dim_);
  // A NaN or Inf query has NaN bounds, which select no row: refuse it.
  if (n == 0 || k == 0 || query.size() != d ||
      !std::all_of(query.begin(), query.end(), [](float x) { return std::isfinite(x); }))
    return {};
  const bool grouped = !groups_.empty();
  k = std::min(k, grouped ? group_count_ : n);

  float largest = 0.0f, query_l1 = 0.0f, query_squares = 0.0f;
  for (float x : query) {
    largest = std::max(largest, std::fabs(x));
    query_l1 += std::fabs(x);
    query_squares += x * x;
  }
  const float query_norm = std::sqrt(query_squares) * 1.001f;  // rounded up: it scales a bound
  const float step = largest > 0.0f ? largest / kQueryMax : 1.0f;
  std::vector<std::int16_t> codes(d);
  for (std::size_t i = 0; i < d; ++i)
    codes[i] = static_cast<std::int16_t>(std::clamp(std::nearbyint(query[i] / step), -kQueryMax, kQueryMax));

  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  std::vector<float> approx(n), bound(n);
  std::vector<float> lower(grouped ? group_count_ : n, kLowest);  // per row, or per group: its best
  for (std::size_t row = 0; row < n; ++row) {
    approx[row] = static_cast<float>(dot_i16_i8(codes.data(), &codes_[row * d], d)) * step * scale_[row];
    // (x 1.001: the bound is itself computed in float)
    bound[row] = (query_l1 * scale_[row] * 0.5f + step * 0.5f * code_l1_[row]) * 1.001f +
                 rounding_bound(d, query_norm, norm_[row]);
    float& slot = lower[grouped ? groups_[row] : row];
    slot = std::max(slot, approx[row] - bound[row]);
  }
  std::nth_element(lower.begin(), lower.begin() + static_cast<std::ptrdiff_t>(k - 1), lower.end(), std::greater<>());
  const float threshold = lower[k - 1];

  const auto better = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::vector<std::pair<float, std::int64_t>> candidates;
  std::vector<std::int64_t> group_slot(grouped ? group_count_ : 0, -1);  // group -> its entry in candidates
  for (std::size_t row = 0; row < n; ++row) {
    if (!(approx[row] + bound[row] >= threshold)) continue;
    const std::pair<float, std::int64_t> scored(dot_f32(query.data(), vectors_ + row * d, d),
                                                static_cast<std::int64_t>(row));
    if (!grouped) {
      candidates.push_back(scored);
      continue;
    }
    std::int64_t& slot = group_slot[groups_[row]];
    if (slot < 0) {
      slot = static_cast<std::int64_t>(candidates.size());
      candidates.push_back(scored);
    } else if (better(scored, candidates[static_cast<std::size_t>(slot)])) {
      candidates[static_cast<std::size_t>(slot)] = scored;
    }
  }
  k = std::min(k, candidates.size());  // (only rows that are not finite could leave fewer)
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k), candidates.end(), better);
  candidates.resize(k);
  return candidates;
}

}  // namespace taconite::gallery
