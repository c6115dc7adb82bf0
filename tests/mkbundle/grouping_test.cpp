#include <gtest/gtest.h>

#include "grouping.hpp"

namespace taconite::mkbundle {
namespace {

void expect_partition(const std::vector<ChannelGroup>& groups, int channels) {
  int next = 0;
  for (const ChannelGroup& g : groups) {
    EXPECT_EQ(g.c0 * 8, next);
    EXPECT_GT(g.icg, 0);
    EXPECT_EQ(g.icg % 8, 0);
    next += g.icg;
  }
  EXPECT_EQ(next, channels);
}

TEST(Grouping, EveryPolicyCoversAllChannelsInOrder) {
  for (Grouping g : {Grouping::Tile, Grouping::Whole, Grouping::Fixed64, Grouping::Uneven})
    for (int ict : {8, 64, 128, 256, 512})
      for (int w : {112, 56, 28, 16, 8})
        for (int k : {1, 3}) expect_partition(group_input_channels({ict, 128, k, w, w}, g), ict);
}

TEST(Grouping, TileFitsTheComputeTileAndTakesTheLargestDivisor) {
  for (int ict : {64, 128, 256, 512})
    for (int w : {112, 56, 28, 16, 8}) {
      const auto groups = group_input_channels({ict, 512, 3, w, w}, Grouping::Tile);
      const int icg = groups.front().icg;
      for (const ChannelGroup& g : groups) EXPECT_EQ(g.icg, icg);
      EXPECT_LE(tile_bytes(icg, 3, w, w), 65536) << ict << "@" << w;
      if (2 * icg <= ict) {
        EXPECT_GT(tile_bytes(2 * icg, 3, w, w), 65536) << "a larger group would fit";
      }
    }
  // The full-resolution 64-channel convs need two dispatches, the 7-wide 512-channel ones fewer.
  EXPECT_EQ(group_input_channels({64, 64, 3, 112, 112}, Grouping::Tile).size(), 2u);
  EXPECT_LT(group_input_channels({512, 512, 3, 8, 8}, Grouping::Tile).size(),
            group_input_channels({512, 512, 3, 16, 16}, Grouping::Tile).size());
}

TEST(Grouping, WholeFixedAndUneven) {
  EXPECT_EQ(group_input_channels({256, 256, 3, 28, 28}, Grouping::Whole).size(), 1u);
  EXPECT_EQ(group_input_channels({256, 256, 3, 28, 28}, Grouping::Fixed64).size(), 4u);
  EXPECT_EQ(group_input_channels({64, 64, 3, 56, 56}, Grouping::Fixed64).size(), 1u);
  EXPECT_EQ(group_input_channels({8, 64, 3, 112, 112}, Grouping::Fixed64).size(), 1u);
  const auto uneven = group_input_channels({128, 128, 3, 28, 28}, Grouping::Uneven);
  ASSERT_EQ(uneven.size(), 2u);
  EXPECT_NE(uneven[0].icg, uneven[1].icg);
}

TEST(Grouping, ParsesItsNames) {
  for (Grouping g : {Grouping::Tile, Grouping::Whole, Grouping::Fixed64, Grouping::Uneven})
    EXPECT_EQ(parse_grouping(to_string(g)), g);
  EXPECT_FALSE(parse_grouping("bogus").has_value());
}

}  // namespace
}  // namespace taconite::mkbundle
