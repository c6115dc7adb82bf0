// The stem zero-pattern diagnostic (spec §5.3): silent for the assumed packing, a warning (not
// an error) when the stem's weights were packed in another layout.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_fixture.hpp"
#include "plan/packing_check.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"

namespace taconite::testing {
namespace {

using ::testing::HasSubstr;

std::optional<std::string> stem_warning(const FixtureOptions& options) {
  const BundleFixture fixture(options);
  const bundle::Bundle bundle = bundle::Bundle::open(fixture.dir());
  const plan::Plan plan = plan::build_plan(bundle);
  return plan::check_stem_zero_pattern(plan);
}

TEST(StemZeroPattern, SilentForTheAssumedPacking) {
  EXPECT_EQ(stem_warning({}), std::nullopt);
  FixtureOptions two_channels;
  two_channels.real_input_channels = 2;
  EXPECT_EQ(stem_warning(two_channels), std::nullopt);
}

TEST(StemZeroPattern, FiresForPlainOihwWeights) {
  FixtureOptions options;
  options.stem_layout = StemLayout::PlainOihw;
  const auto warning = stem_warning(options);
  ASSERT_TRUE(warning.has_value());
  EXPECT_THAT(*warning, HasSubstr("manifest.txt:8"));  // the stem conv record
  EXPECT_THAT(*warning, HasSubstr("plain OIHW"));
}

TEST(StemZeroPattern, FiresForOutputMajorBlocks) {
  FixtureOptions options;
  options.stem_layout = StemLayout::InnerO8I8;
  const auto warning = stem_warning(options);
  ASSERT_TRUE(warning.has_value());
  EXPECT_THAT(*warning, HasSubstr("[o8][i8]"));
}

TEST(StemZeroPattern, DoesNotApplyWhenEveryInputChannelIsReal) {
  FixtureOptions options;
  options.real_input_channels = 8;  // no zero channels: nothing to check, even with a wrong layout
  options.stem_layout = StemLayout::PlainOihw;
  EXPECT_EQ(stem_warning(options), std::nullopt);
}

TEST(StemZeroPattern, IsADiagnosticOfTheApiNotALoadError) {
  FixtureOptions options;
  options.stem_layout = StemLayout::PlainOihw;
  const BundleFixture wrong(options);
  LoadOptions load;
  load.backend = "cpu-reference";
  auto loaded = IrEmbedder::load(wrong.dir(), load);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded.value().diagnostics().size(), 1u);
  EXPECT_THAT(loaded.value().diagnostics()[0], HasSubstr("zero pattern"));

  const BundleFixture right;
  auto clean = IrEmbedder::load(right.dir(), load);
  ASSERT_TRUE(clean.ok()) << clean.error().message;
  EXPECT_TRUE(clean.value().diagnostics().empty());
}

}  // namespace
}  // namespace taconite::testing
