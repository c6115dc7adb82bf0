// The assumed NPU weight packing (spec §5.3): pack/unpack round trips and the exact index formula.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <vector>

#include "numerics/weight_packing.hpp"

namespace taconite::numerics {
namespace {

// Unique raw patterns so a misplaced element cannot go unnoticed.
std::vector<bf16_t> iota_weights(std::size_t n) {
  std::vector<bf16_t> w(n);
  std::iota(w.begin(), w.end(), bf16_t{1});
  return w;
}

std::size_t oihw_index(const ConvWeightShape& s, std::size_t o, std::size_t i, std::size_t ky, std::size_t kx) {
  return ((o * s.in_channels + i) * s.kernel + ky) * s.kernel + kx;
}

class PackingRoundTrip : public ::testing::TestWithParam<ConvWeightShape> {};

TEST_P(PackingRoundTrip, UnpackInvertsPackAndEveryPositionIsUsedOnce) {
  const ConvWeightShape shape = GetParam();
  const std::vector<bf16_t> oihw = iota_weights(shape.elements());
  std::vector<bf16_t> packed(shape.elements(), 0), back(shape.elements(), 0);
  pack_conv_weights(shape, oihw, packed);
  unpack_conv_weights(shape, packed, back);
  EXPECT_EQ(back, oihw);
  EXPECT_EQ(std::set<bf16_t>(packed.begin(), packed.end()).size(), shape.elements());  // a permutation
  EXPECT_NE(packed, oihw);  // and not the identity
}

INSTANTIATE_TEST_SUITE_P(Shapes, PackingRoundTrip,
                         ::testing::Values(ConvWeightShape{8, 8, 1}, ConvWeightShape{16, 24, 1}, ConvWeightShape{8, 8, 3},
                                           ConvWeightShape{16, 8, 3}, ConvWeightShape{24, 16, 3}));

TEST(WeightPacking, ThreeByThreeIndexFormula) {
  // wt[(((og*(icg/8) + ig)*3 + ky)*3 + kx)*64 + i8*8 + o8] = W[8*og+o8][8*ig+i8][ky][kx]
  const ConvWeightShape s{16, 24, 3};
  // W[13][17][2][1]: og=1 o8=5, ig=2 i8=1 -> (((1*3+2)*3+2)*3+1)*64 + 1*8 + 5 = 52*64 + 13 = 3341
  EXPECT_EQ(packed_weight_index(s, 13, 17, 2, 1), 3341u);
  // W[0][0][0][0] -> 0; W[7][0][0][0] -> 7 (output channel innermost); W[0][1][0][0] -> 8
  EXPECT_EQ(packed_weight_index(s, 0, 0, 0, 0), 0u);
  EXPECT_EQ(packed_weight_index(s, 7, 0, 0, 0), 7u);
  EXPECT_EQ(packed_weight_index(s, 0, 1, 0, 0), 8u);
  EXPECT_EQ(packed_weight_index(s, 0, 0, 0, 1), 64u);
  EXPECT_EQ(packed_weight_index(s, 0, 0, 1, 0), 192u);
  EXPECT_EQ(packed_weight_index(s, 0, 8, 0, 0), 576u);  // next input group: 9 blocks later
  EXPECT_EQ(packed_weight_index(s, 8, 0, 0, 0), 1728u);  // next output group: 3 input groups * 9 blocks

  const std::vector<bf16_t> oihw = iota_weights(s.elements());
  std::vector<bf16_t> packed(s.elements());
  pack_conv_weights(s, oihw, packed);
  EXPECT_EQ(packed[3341], oihw[oihw_index(s, 13, 17, 2, 1)]);
  EXPECT_EQ(packed[1728], oihw[oihw_index(s, 8, 0, 0, 0)]);
  EXPECT_EQ(packed[s.elements() - 1], oihw[oihw_index(s, 15, 23, 2, 2)]);
}

TEST(WeightPacking, OneByOneIndexFormula) {
  // wt[(og*(icg/8) + ig)*64 + i8*8 + o8] = W[8*og+o8][8*ig+i8]
  const ConvWeightShape s{16, 16, 1};
  // W[9][3]: og=1 o8=1, ig=0 i8=3 -> (1*2+0)*64 + 3*8 + 1 = 153
  EXPECT_EQ(packed_weight_index(s, 9, 3, 0, 0), 153u);
  // W[2][12]: og=0 o8=2, ig=1 i8=4 -> 64 + 32 + 2 = 98
  EXPECT_EQ(packed_weight_index(s, 2, 12, 0, 0), 98u);
  const std::vector<bf16_t> oihw = iota_weights(s.elements());
  std::vector<bf16_t> packed(s.elements());
  pack_conv_weights(s, oihw, packed);
  EXPECT_EQ(packed[153], oihw[9 * 16 + 3]);
  EXPECT_EQ(packed[98], oihw[2 * 16 + 12]);
}

TEST(WeightPacking, EachBlockIsAnInputByOutputMatrix) {
  // Within one 64-element block, rows are input channels and columns output channels.
  const ConvWeightShape s{8, 8, 1};
  std::vector<bf16_t> oihw(64);
  for (std::size_t o = 0; o < 8; ++o)
    for (std::size_t i = 0; i < 8; ++i) oihw[o * 8 + i] = static_cast<bf16_t>(o * 100 + i);
  std::vector<bf16_t> packed(64);
  pack_conv_weights(s, oihw, packed);
  for (std::size_t i8 = 0; i8 < 8; ++i8)
    for (std::size_t o8 = 0; o8 < 8; ++o8) EXPECT_EQ(packed[i8 * 8 + o8], o8 * 100 + i8);
}

}  // namespace
}  // namespace taconite::numerics
