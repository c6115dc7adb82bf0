// How the replay executor groups the fixture's steps (spec §4 order kept): banded units of a conv's
// last record or an elementwise step plus the elementwise steps of equal dims after it, and which
// following conv's slices a unit may cut ahead.
#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_fixture.hpp"
#include "plan/plan.hpp"
#include "replay/fused_units.hpp"

namespace taconite::replay {
namespace {

using testing::BundleFixture;

// The fixture's steps: 0 input, 1 stem conv, 2 prelu_bias, 3 affine, 4-5 the split conv, 6 bias,
// 7 the 1x1 conv, 8 bias, 9 add, 10 subsample, 11 head. All activations are 16x8x8 but the input's.
std::vector<ReplayUnit> units_of(const BundleFixture& fixture) {
  const auto bundle = bundle::Bundle::open(fixture.dir());
  return group_replay_units(plan::build_plan(bundle));
}

void expect_unit(const ReplayUnit& unit, std::size_t first, std::size_t end, bool banded, std::size_t slices_end) {
  EXPECT_EQ(unit.first, first);
  EXPECT_EQ(unit.end, end) << "unit at " << first;
  EXPECT_EQ(unit.banded, banded) << "unit at " << first;
  if (banded) {
    EXPECT_EQ(unit.slices_end, slices_end) << "unit at " << first;
  }
}

TEST(ReplayUnits, FixtureStepsGroupIntoBandedUnitsThatCutTheNextConvsSlices) {
  const BundleFixture fixture;
  const std::vector<ReplayUnit> units = units_of(fixture);
  ASSERT_EQ(units.size(), 7u);
  expect_unit(units[0], 0, 1, false, 0);   // input
  expect_unit(units[1], 1, 4, true, 6);    // stem finish + prelu_bias + affine; cuts both records' slices
  expect_unit(units[2], 4, 5, false, 0);   // first record of the split conv: dispatch only
  expect_unit(units[3], 5, 7, true, 8);    // its last record + bias; cuts the 1x1's slice
  expect_unit(units[4], 7, 10, true, 10);  // 1x1 finish + bias + add; a subsample follows
  expect_unit(units[5], 10, 11, false, 0); // subsample
  expect_unit(units[6], 11, 12, false, 0); // head
  EXPECT_EQ(units[1].dims, (plan::Dims{16, 8, 8}));
}

TEST(ReplayUnits, StepsOfOtherDimsEndAUnit) {
  BundleFixture fixture;
  // The add at half resolution after a subsample: the bias unit before it cannot take it in.
  const int add = fixture.manifest_line_of("add a=3");
  const int subsample = fixture.manifest_line_of("subsample");
  const std::string subsample_text = fixture.manifest_line(subsample);
  fixture.erase_manifest_line(subsample);
  fixture.insert_manifest_line(add, "subsample in=4 out=4 c=16 h=8 w=8 stride=2");
  fixture.insert_manifest_line(add, "subsample in=3 out=3 c=16 h=8 w=8 stride=2");
  fixture.replace_manifest_line(fixture.manifest_line_of("add a=3"), "add a=3 b=4 out=6 c=16 h=4 w=4");
  fixture.flush();
  const std::vector<ReplayUnit> units = units_of(fixture);
  // ..., 7 the 1x1 + bias (its slices end the unit: subsample follows), 9-10 subsamples, 11 add alone.
  ASSERT_EQ(units.size(), 9u);
  expect_unit(units[4], 7, 9, true, 9);
  expect_unit(units[7], 11, 12, true, 12);
  EXPECT_EQ(units[7].dims, (plan::Dims{16, 4, 4}));
}

TEST(ReplayUnits, AConvReadingOtherDimsIsNotCutAhead) {
  const BundleFixture fixture;
  const auto bundle = bundle::Bundle::open(fixture.dir());
  plan::Plan plan = plan::build_plan(bundle);
  // Pretend the affine works on 8 channels: it no longer joins the stem's unit, and its unit's
  // bands are not the rows of the 16-channel input the split conv slices.
  std::get<plan::AffineStep>(plan.steps[3]).dims = {8, 8, 8};
  const std::vector<ReplayUnit> units = group_replay_units(plan);
  expect_unit(units[1], 1, 3, true, 3);
  expect_unit(units[2], 3, 4, true, 4);
}

}  // namespace
}  // namespace taconite::replay
