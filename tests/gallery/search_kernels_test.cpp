// The gallery's search kernels against plain double-precision references: the run-time-chosen dot
// products (tails, extreme int8/int16 codes without overflow), the int8-prefiltered exact scan
// (the same top k as a float search, also on near-ties, non-unit rows and odd sizes), and HNSW
// built on the SIMD storage (finds probes' sources; its saved form is tested in gallery_test).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <vector>

#include "exact_scan.hpp"
#include "gallery_index.hpp"
#include "requires_hnsw.hpp"
#include "simd_dot.hpp"

namespace {

using namespace taconite::gallery;

std::vector<float> gaussian(std::size_t n, std::mt19937& rng, bool unit, int dim) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n * static_cast<std::size_t>(dim));
  for (float& x : v) x = normal(rng);
  if (unit)
    for (std::size_t r = 0; r < n; ++r) {
      float* row = &v[r * static_cast<std::size_t>(dim)];
      const double norm = std::sqrt(std::inner_product(row, row + dim, row, 0.0));
      for (int i = 0; i < dim; ++i) row[i] = static_cast<float>(row[i] / norm);
    }
  return v;
}

// The k best rows by a double-precision inner product.
std::vector<std::int64_t> reference_top(const std::vector<float>& rows, int dim, const float* query, std::size_t k) {
  const std::size_t n = rows.size() / static_cast<std::size_t>(dim);
  std::vector<double> score(n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < std::size_t(dim); ++i) score[r] += double(rows[r * std::size_t(dim) + i]) * query[i];
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min(k, n)), order.end(),
                    [&](std::int64_t a, std::int64_t b) { return score[std::size_t(a)] > score[std::size_t(b)]; });
  order.resize(std::min(k, n));
  return order;
}

std::vector<std::int64_t> rows_of(const std::vector<std::pair<float, std::int64_t>>& top) {
  std::vector<std::int64_t> rows;
  for (const auto& [score, row] : top) rows.push_back(row);
  return rows;
}

TEST(SearchKernels, DotProductsMatchTheReferenceAtEveryLength) {
  std::printf("kernels chosen for this CPU: %s\n", dot_kernels_isa());
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> q16(-32767, 32767), c8(-127, 127);
  for (std::size_t n : {0u, 1u, 7u, 15u, 16u, 17u, 31u, 33u, 512u, 515u}) {
    const std::vector<float> a = gaussian(1, rng, false, int(n) + 1), b = gaussian(1, rng, false, int(n) + 1);
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) expected += double(a[i]) * b[i];
    EXPECT_NEAR(dot_f32(a.data(), b.data(), n), expected, 1e-4 * (1 + std::sqrt(double(n)))) << n;
    EXPECT_NEAR(portable::dot_f32(a.data(), b.data(), n), expected, 1e-4 * (1 + std::sqrt(double(n)))) << n;

    std::vector<std::int16_t> q(n);
    std::vector<std::int8_t> c(n);
    std::int64_t exact = 0;
    for (std::size_t i = 0; i < n; ++i) {
      q[i] = static_cast<std::int16_t>(q16(rng));
      c[i] = static_cast<std::int8_t>(c8(rng));
      exact += std::int64_t{q[i]} * c[i];
    }
    EXPECT_EQ(dot_i16_i8(q.data(), c.data(), n), exact) << n;
    EXPECT_EQ(portable::dot_i16_i8(q.data(), c.data(), n), exact) << n;
  }
}

TEST(SearchKernels, IntegerDotDoesNotOverflowWithExtremeCodes) {
  for (std::size_t n : {4096u, 4112u, 20000u}) {  // the largest gallery dimension, and beyond
    for (int sign : {1, -1}) {
      std::vector<std::int16_t> q(n, static_cast<std::int16_t>(32767 * sign));
      std::vector<std::int8_t> c(n, 127);
      const std::int64_t exact = std::int64_t{32767} * 127 * std::int64_t(n) * sign;
      EXPECT_EQ(dot_i16_i8(q.data(), c.data(), n), exact) << n;
      EXPECT_EQ(portable::dot_i16_i8(q.data(), c.data(), n), exact) << n;
    }
  }
}

TEST(ExactScanTest, SameTopKAsAFloatSearchOnRandomUnitVectors) {
  constexpr int kDim = 512;
  std::mt19937 rng(11);
  const std::vector<float> rows = gaussian(4000, rng, true, kDim);
  const ExactScan scan(kDim, rows);
  const std::vector<float> queries = gaussian(20, rng, true, kDim);
  for (std::size_t q = 0; q < 20; ++q)
    for (std::size_t k : {1u, 10u, 100u}) {
      const float* query = &queries[q * kDim];
      const auto top = scan.top({query, kDim}, k);
      EXPECT_EQ(rows_of(top), reference_top(rows, kDim, query, k)) << "query " << q << " k " << k;
      for (std::size_t i = 1; i < top.size(); ++i) EXPECT_GE(top[i - 1].first, top[i].first);
    }
}

// Rows that differ from the best match by less than an int8 step: the int8 scores cannot order
// them, the float re-score must.
TEST(ExactScanTest, NearTiesBelowTheInt8ResolutionAreOrderedExactly) {
  constexpr int kDim = 64;
  std::mt19937 rng(5);
  const std::vector<float> base = gaussian(1, rng, true, kDim);
  std::vector<float> rows = gaussian(300, rng, true, kDim);
  std::normal_distribution<float> tiny(0.0f, 2e-4f);
  for (std::size_t r = 0; r < 40; ++r)  // 40 near-copies of the query direction
    for (int i = 0; i < kDim; ++i) rows[r * kDim + std::size_t(i)] = base[std::size_t(i)] + tiny(rng);
  const ExactScan scan(kDim, rows);
  for (std::size_t k : {1u, 5u, 39u})
    EXPECT_EQ(rows_of(scan.top(base, k)), reference_top(rows, kDim, base.data(), k)) << "k " << k;
}

TEST(ExactScanTest, OddSizesNonUnitRowsAndSmallGalleries) {
  std::mt19937 rng(9);
  for (int dim : {1, 3, 37}) {
    const std::vector<float> rows = gaussian(200, rng, false, dim);  // norms ~ sqrt(dim), not 1
    const ExactScan scan(dim, rows);
    const std::vector<float> query = gaussian(1, rng, false, dim);
    EXPECT_EQ(rows_of(scan.top(query, 7)), reference_top(rows, dim, query.data(), 7)) << "dim " << dim;
    EXPECT_EQ(scan.top(query, 1000).size(), 200u) << "k above the row count gives every row";
    EXPECT_TRUE(scan.top(std::vector<float>(std::size_t(dim) + 1), 3).empty()) << "wrong-sized query";
  }
  const std::vector<float> none;
  EXPECT_TRUE(ExactScan(8, none).top(std::vector<float>(8, 1.0f), 3).empty());
}

// Issue 20 item 4: NaN bounds select no row; the scan refuses such a query instead of sorting nothing.
TEST(ExactScanTest, NonFiniteQueriesAreRefused) {
  std::mt19937 rng(4);
  const std::vector<float> rows = gaussian(100, rng, true, 8);
  const ExactScan scan(8, rows);
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    std::vector<float> query = gaussian(1, rng, true, 8);
    query[5] = bad;
    for (std::size_t k : {1u, 3u, 100u}) EXPECT_TRUE(scan.top(query, k).empty()) << bad << " k " << k;
  }
}

// With groups the scan ranks groups by their best row: the same as the best row of each group in
// a full double-precision ranking.
TEST(ExactScanTest, GroupsAreRankedByTheirBestRow) {
  constexpr int kDim = 32;
  std::mt19937 rng(6);
  const std::vector<float> rows = gaussian(3000, rng, true, kDim);
  std::vector<std::uint32_t> groups(3000);
  for (std::size_t r = 0; r < groups.size(); ++r)
    groups[r] = r < 2000 ? 0 : std::uint32_t(1 + r % 50);  // one big group
  const ExactScan scan(kDim, rows, groups);
  const std::vector<float> query = gaussian(1, rng, true, kDim);
  std::vector<std::int64_t> expected;
  std::vector<bool> seen(51);
  for (std::int64_t row : reference_top(rows, kDim, query.data(), 3000))
    if (!seen[groups[std::size_t(row)]]) {
      seen[groups[std::size_t(row)]] = true;
      expected.push_back(row);
    }
  for (std::size_t k : {1u, 5u, 51u, 60u}) {
    std::vector<std::int64_t> want(expected.begin(), expected.begin() + std::ptrdiff_t(std::min(k, expected.size())));
    EXPECT_EQ(rows_of(scan.top(query, k)), want) << "k " << k;
  }
}

TEST(SimdHnsw, FindsTheSourceOfNearbyProbesWithExactSimilarities) {
  TACONITE_REQUIRE_HNSW();
  constexpr int kDim = 128;
  constexpr std::size_t kRows = 3000;
  std::mt19937 rng(21);
  const std::vector<float> rows = gaussian(kRows, rng, true, kDim);
  std::vector<std::int64_t> ids(kRows);
  std::iota(ids.begin(), ids.end(), 0);
  IndexOptions hnsw;
  hnsw.approximate_above = 0;
  auto approximate = GalleryIndex::build(kDim, rows, ids, hnsw);
  ASSERT_TRUE(approximate.ok());
  ASSERT_TRUE(approximate.value().approximate());
  // Probes near enrolled rows (cosine ~0.8): the graph search must find their source.
  std::normal_distribution<float> normal;
  int found = 0;
  for (std::size_t p = 0; p < 50; ++p) {
    const std::size_t source = (p * 61) % kRows;
    std::vector<float> probe(kDim);
    for (int i = 0; i < kDim; ++i)
      probe[std::size_t(i)] = rows[source * kDim + std::size_t(i)] + 0.75f * normal(rng) / std::sqrt(float(kDim));
    const auto match = approximate.value().search(probe, 1);
    ASSERT_EQ(match.size(), 1u);
    found += match[0].identity_id == std::int64_t(source);
    // The similarity is the cosine of the probe and the matched row.
    const double norm = std::sqrt(std::inner_product(probe.begin(), probe.end(), probe.begin(), 0.0));
    const double cosine =
        std::inner_product(probe.begin(), probe.end(), &rows[std::size_t(match[0].identity_id) * kDim], 0.0) / norm;
    EXPECT_NEAR(match[0].similarity, cosine, 1e-5);
  }
  EXPECT_GE(found, 49) << "recall@1 of 50 probes";
}

}  // namespace
