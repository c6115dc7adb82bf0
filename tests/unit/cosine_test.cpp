// taconite::cosine: double-precision cosine similarity, 0 for zero vectors or mismatched sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "taconite/embedder.hpp"

namespace taconite {
namespace {

using V = std::vector<float>;

TEST(Cosine, IdenticalOppositeOrthogonalAndScaled) {
  const V a = {1.0f, 2.0f, -3.0f, 0.5f};
  EXPECT_NEAR(cosine(a, a), 1.0, 1e-15);
  EXPECT_NEAR(cosine(a, V{-1.0f, -2.0f, 3.0f, -0.5f}), -1.0, 1e-15);
  EXPECT_NEAR(cosine(a, V{1000.0f, 2000.0f, -3000.0f, 500.0f}), 1.0, 1e-15);
  EXPECT_EQ(cosine(V{1.0f, 0.0f}, V{0.0f, 5.0f}), 0.0);
  // 45 degrees
  EXPECT_NEAR(cosine(V{1.0f, 0.0f}, V{1.0f, 1.0f}), std::sqrt(0.5), 1e-15);
}

TEST(Cosine, ZeroVectorsGiveZero) {
  EXPECT_EQ(cosine(V{0.0f, 0.0f, 0.0f}, V{1.0f, 2.0f, 3.0f}), 0.0);
  EXPECT_EQ(cosine(V{1.0f, 2.0f, 3.0f}, V{0.0f, -0.0f, 0.0f}), 0.0);
  EXPECT_EQ(cosine(V{0.0f}, V{0.0f}), 0.0);
}

TEST(Cosine, EmptyOrMismatchedSizesGiveZero) {
  EXPECT_EQ(cosine(V{}, V{}), 0.0);
  EXPECT_EQ(cosine(V{1.0f, 2.0f}, V{1.0f, 2.0f, 3.0f}), 0.0);
}

TEST(Cosine, ExtremeMagnitudesDoNotOverflowOrUnderflow) {
  // Squares of 1e30 overflow f32 and of 1e-30 underflow it; the double accumulation copes.
  EXPECT_NEAR(cosine(V{1e30f, 1e30f}, V{2e30f, 2e30f}), 1.0, 1e-12);
  EXPECT_NEAR(cosine(V{1e-30f, -1e-30f}, V{1e-30f, -1e-30f}), 1.0, 1e-12);
}

TEST(Cosine, AccumulatesInDouble) {
  // Many small differences that an f32 accumulator would partly lose.
  V a(100000), b(100000);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = 1.0f + static_cast<float>(i % 7) * 1e-3f;
    b[i] = a[i] * (i % 2 ? 1.0001f : 0.9999f);
  }
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) dot += double(a[i]) * b[i], na += double(a[i]) * a[i], nb += double(b[i]) * b[i];
  EXPECT_NEAR(cosine(a, b), dot / std::sqrt(na * nb), 1e-12);
  EXPECT_LT(cosine(a, b), 1.0);
}

}  // namespace
}  // namespace taconite
