// build_plan on the fixture bundle: typed steps, inferred kernel sizes, contexts, buffer slots
// and memory accounting; plus the forward-compatible cases a valid bundle may contain.
#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_fixture.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"

namespace taconite::testing {
namespace {

plan::Plan plan_of(const BundleFixture& fixture) {
  const bundle::Bundle bundle = bundle::Bundle::open(fixture.dir());
  return plan::build_plan(bundle);  // steps keep views into the bundle: use only shapes below
}

TEST(Plan, FixtureBecomesTypedSteps) {
  const BundleFixture fixture;
  const bundle::Bundle bundle = bundle::Bundle::open(fixture.dir());
  const plan::Plan p = plan::build_plan(bundle);

  ASSERT_EQ(p.steps.size(), 12u);
  EXPECT_TRUE(std::holds_alternative<plan::InputStep>(p.steps[0]));
  EXPECT_TRUE(std::holds_alternative<plan::PreluBiasStep>(p.steps[2]));
  EXPECT_TRUE(std::holds_alternative<plan::AffineStep>(p.steps[3]));
  EXPECT_TRUE(std::holds_alternative<plan::BiasStep>(p.steps[6]));
  EXPECT_TRUE(std::holds_alternative<plan::AddStep>(p.steps[9]));
  EXPECT_TRUE(std::holds_alternative<plan::SubsampleStep>(p.steps[10]));
  EXPECT_TRUE(std::holds_alternative<plan::HeadStep>(p.steps.back()));

  EXPECT_EQ(p.input, (plan::Dims{8, 8, 8}));
  EXPECT_EQ(p.embed_dim, 16);
  EXPECT_EQ(p.conv_dispatches, 4);
  EXPECT_EQ(p.model, "IR-fixture");
  EXPECT_EQ(p.input_step().recorded.size(), 512u);

  // Kernel sizes come from wt's element count; records keep their manifest line.
  const auto& stem = std::get<plan::ConvStep>(p.steps[1]);
  const auto& g0 = std::get<plan::ConvStep>(p.steps[4]);
  const auto& g1 = std::get<plan::ConvStep>(p.steps[5]);
  const auto& sc = std::get<plan::ConvStep>(p.steps[7]);
  EXPECT_EQ(stem.kernel, 3);
  EXPECT_EQ(g0.kernel, 3);
  EXPECT_EQ(sc.kernel, 1);
  EXPECT_EQ(stem.line, 8);
  EXPECT_EQ(g1.line, 12);
  EXPECT_TRUE(g0.first);
  EXPECT_FALSE(g0.last);
  EXPECT_FALSE(g1.first);
  EXPECT_TRUE(g1.last);
  EXPECT_EQ(g1.c0, 1);
  EXPECT_EQ(g0.wp, 12);
  EXPECT_EQ(stem.weights.size(), 16u * 8 * 9);
  EXPECT_EQ(sc.weights.size(), 16u * 16);

  // Three contexts, in order of first use, each with its one instruction stream.
  ASSERT_EQ(p.contexts.size(), 3u);
  EXPECT_EQ(p.contexts[0].key, "stem");
  EXPECT_EQ(p.contexts[1].key, "k3");
  EXPECT_EQ(p.contexts[2].key, "k1");
  EXPECT_EQ(p.contexts[1].kernel_name, "conv2dk3_bf16");
  EXPECT_EQ(p.contexts[1].insts.filename(), "conv3x3.insts.bin");
  EXPECT_EQ(p.contexts[1].first_conv_line, 11);
  EXPECT_EQ(g0.context, g1.context);

  // Buffers 0..6 each get a slot; scratch sized for the largest slice / dispatch.
  EXPECT_EQ(p.slot_elements.size(), 7u);
  EXPECT_EQ(p.slot_elements[0], 512u);
  EXPECT_EQ(p.max_slice_elements, 2u * 8 * 8 * 12);   // the split conv: its two slices h * icg * wp
  EXPECT_EQ(p.max_dispatch_elements, 8u * 16 * 12);   // the split conv: oh * oc * owp
  EXPECT_GT(p.activation_bytes, 0u);
  EXPECT_LT(p.activation_bytes, std::size_t{1} << 20);

  const auto& head = std::get<plan::HeadStep>(p.steps.back());
  EXPECT_EQ(head.k, 256u);
  EXPECT_EQ(head.n, 16u);
  EXPECT_EQ(head.bias.size(), 16u);
}

TEST(Plan, UnknownExtraKeysAreIgnored) {
  BundleFixture fixture;
  fixture.set_field(fixture.manifest_line_of("wt=sc.wt"), "tile_hint", "4x4");
  fixture.set_field(fixture.manifest_line_of("head "), "normalise", "no");
  fixture.insert_manifest_line(3, "param exporter export_ir18.py  v2");
  fixture.flush();
  const plan::Plan p = plan_of(fixture);
  EXPECT_EQ(p.conv_dispatches, 4);
}

TEST(Plan, ABufferMayBeRedefinedByALaterStep) {
  // Buffer 6 is defined three times (16x4x4, 16x2x2, 16x4x4); the head reads the last one.
  BundleFixture fixture;
  const int head = fixture.manifest_line_of("head ");
  fixture.insert_manifest_line(head, "subsample in=5 out=6 c=16 h=8 w=8 stride=4");
  fixture.insert_manifest_line(head + 1, "subsample in=5 out=6 c=16 h=8 w=8 stride=2");
  fixture.flush();
  const plan::Plan p = plan_of(fixture);
  EXPECT_EQ(p.steps.size(), 14u);
}

TEST(Plan, RedefinedBufferMustBeReadWithItsNewShape) {
  BundleFixture fixture;
  const int head = fixture.manifest_line_of("head ");
  fixture.insert_manifest_line(head, "subsample in=5 out=6 c=16 h=8 w=8 stride=4");  // 6 is now 16x2x2
  fixture.flush();
  LoadOptions options;
  options.backend = "cpu-reference";
  auto loaded = IrEmbedder::load(fixture.dir(), options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("manifest.txt:" + std::to_string(head + 1)), std::string::npos)
      << loaded.error().message;
  EXPECT_NE(loaded.error().message.find("(c=16, h=2, w=2)"), std::string::npos) << loaded.error().message;
}

TEST(Plan, FixtureLoadsThroughTheApi) {
  const BundleFixture fixture;
  LoadOptions options;
  options.backend = "cpu-reference";
  auto loaded = IrEmbedder::load(fixture.dir(), options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  IrEmbedder& e = loaded.value();
  EXPECT_EQ(e.input_dims().channels, 3);  // RGB: the stem's padding to 8 is the runtime's business
  EXPECT_EQ(inspect::padded_input_dims(*e.shared_model()).channels, 8);
  EXPECT_EQ(e.input_dims().height, 8);
  EXPECT_EQ(e.input_dims().width, 8);
  EXPECT_EQ(e.embed_dim(), 16);
  EXPECT_EQ(inspect::conv_dispatches(e), 4);
  EXPECT_EQ(e.model(), "IR-fixture");
  EXPECT_EQ(inspect::param(e, "model"), "IR-fixture");
  EXPECT_EQ(inspect::param(e, "absent"), "");
  EXPECT_EQ(e.backend(), "cpu-reference");
  EXPECT_EQ(inspect::reference_f32(e, "head.b2").size(), 16u);
  EXPECT_TRUE(inspect::reference_f32(e, "ref.input").empty());  // bf16, not f32
  EXPECT_TRUE(inspect::reference_f32(e, "nope").empty());
}

// The path rules reject escapes, not symlinks as such: links that stay inside the bundle, and a
// bundle directory reached through a link, load fine.
TEST(Plan, SymlinksThatStayInsideTheBundleAreAccepted) {
  BundleFixture fixture;
  std::filesystem::create_symlink("conv1x1.insts.bin", fixture.dir() / "kernels" / "alias.insts.bin");
  std::filesystem::create_directory_symlink("kernels", fixture.dir() / "k");
  fixture.set_field(fixture.manifest_line_of("wt=sc.wt"), "insts", "kernels/alias.insts.bin");
  fixture.replace_manifest_line(fixture.manifest_line_of("xclbin k3"), "xclbin k3 k/conv3x3.xclbin conv2dk3_bf16");
  fixture.flush();
  const std::filesystem::path link = fixture.outside() / "bundle-link";
  std::filesystem::create_directory_symlink(fixture.dir(), link);

  LoadOptions options;
  options.backend = "cpu-reference";
  auto loaded = IrEmbedder::load(link, options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(inspect::conv_dispatches(loaded.value()), 4);

  const bundle::Bundle bundle = bundle::Bundle::open(link);
  const plan::Plan p = plan::build_plan(bundle);
  EXPECT_EQ(p.contexts[2].insts.filename(), "conv1x1.insts.bin");  // the link resolved
}

// Spec §2 normalises paths: a '..' that stays inside the bundle is not an escape.
TEST(Plan, DotDotThatStaysInsideTheBundleIsAccepted) {
  BundleFixture fixture;
  const int line = fixture.manifest_line_of("wt=sc.wt");
  fixture.set_field(line, "insts", "kernels/../kernels/conv1x1.insts.bin");
  fixture.flush();
  const bundle::Bundle bundle = bundle::Bundle::open(fixture.dir());
  const plan::Plan p = plan::build_plan(bundle);
  EXPECT_EQ(p.contexts[2].insts.filename(), "conv1x1.insts.bin");
}

// Editors on some systems write a UTF-8 byte-order mark; it must not hide the version record.
TEST(Plan, ByteOrderMarkBeforeTheFirstRecordIsIgnored) {
  BundleFixture fixture;
  fixture.replace_manifest_line(1, "\xEF\xBB\xBF" + fixture.manifest_line(1));
  fixture.flush();
  LoadOptions options;
  options.backend = "cpu-reference";
  auto loaded = IrEmbedder::load(fixture.dir(), options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
}

// A moved-from embedder must not crash: embed calls give an Input error, accessors empty values.
TEST(Plan, MovedFromEmbedderFailsCleanly) {
  const BundleFixture fixture;
  LoadOptions options;
  options.backend = "cpu-reference";
  auto loaded = IrEmbedder::load(fixture.dir(), options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  IrEmbedder first = std::move(loaded.value());
  IrEmbedder second = std::move(first);
  auto recorded = inspect::embed_recorded(first);  // NOLINT(bugprone-use-after-move): the point of the test
  ASSERT_FALSE(recorded.ok());
  EXPECT_EQ(recorded.error().kind, ErrorKind::Input);
  EXPECT_NE(recorded.error().message.find("moved from"), std::string::npos);
  EXPECT_FALSE(first.embed_batch({}).ok());
  EXPECT_EQ(first.embed_dim(), 0);
  EXPECT_EQ(first.backend(), "");
  EXPECT_TRUE(first.diagnostics().empty());
  EXPECT_TRUE(inspect::reference_f32(first, "head.b2").empty());
  EXPECT_TRUE(inspect::embed_recorded(second).ok());
}

TEST(Plan, UnknownBackendIsADeviceErrorListingTheCompiledOnes) {
  const BundleFixture fixture;
  LoadOptions options;
  options.backend = "gpu";
  auto loaded = IrEmbedder::load(fixture.dir(), options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().kind, ErrorKind::Device);
  EXPECT_NE(loaded.error().message.find("cpu-reference"), std::string::npos) << loaded.error().message;
}

TEST(Plan, NotADirectoryIsAnIoError) {
  const BundleFixture fixture;
  auto loaded = IrEmbedder::load(fixture.dir() / "manifest.txt");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().kind, ErrorKind::Io);
  EXPECT_NE(loaded.error().message.find("manifest.txt: not a directory"), std::string::npos) << loaded.error().message;
  auto missing = IrEmbedder::load(fixture.dir() / "no-such-dir");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::Io);
  EXPECT_NE(missing.error().message.find("no-such-dir: cannot open the bundle directory: does not exist"),
            std::string::npos)
      << missing.error().message;
}

}  // namespace
}  // namespace taconite::testing
