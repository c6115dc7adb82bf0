// A full replay of the fixture bundle on cpu-reference against the naive, independent
// channel-major computation; the embed() path against the recorded input; API input errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "bundle_fixture.hpp"
#include "naive_reference.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"

namespace taconite::testing {
namespace {

using ::testing::HasSubstr;

IrEmbedder load_reference(const BundleFixture& fixture, int threads = 2) {
  LoadOptions options;
  options.backend = "cpu-reference";
  options.threads = threads;
  auto loaded = IrEmbedder::load(fixture.dir(), options);
  if (!loaded.ok()) throw std::runtime_error(loaded.error().message);
  return std::move(loaded).value();
}

FaceChw face_of(const std::vector<float>& chw, int channels) { return {chw, channels, 8, 8}; }

TEST(Replay, RecordedInputMatchesTheNaiveComputation) {
  const BundleFixture fixture;
  IrEmbedder embedder = load_reference(fixture);
  const auto replay = inspect::embed_recorded(embedder);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  const std::vector<float> naive = naive_fixture_embedding(fixture.model());
  ASSERT_EQ(replay.value().size(), naive.size());

  EXPECT_GE(cosine(replay.value(), naive), 0.99999);
  double norm = 0.0;
  for (float v : naive) norm = std::max(norm, std::fabs(static_cast<double>(v)));
  ASSERT_GT(norm, 0.0);
  for (std::size_t j = 0; j < naive.size(); ++j) EXPECT_NEAR(replay.value()[j], naive[j], 5e-3 * norm) << j;
}

TEST(Replay, DifferentSeedsGiveDifferentEmbeddingsThatStillMatch) {
  FixtureOptions options;
  options.seed = 7;
  const BundleFixture other(options), fixture;
  IrEmbedder a = load_reference(fixture), b = load_reference(other);
  const auto ea = inspect::embed_recorded(a), eb = inspect::embed_recorded(b);
  ASSERT_TRUE(ea.ok() && eb.ok());
  EXPECT_LT(cosine(ea.value(), eb.value()), 0.99);  // the comparison above is not vacuous
  EXPECT_GE(cosine(eb.value(), naive_fixture_embedding(other.model())), 0.99999);
}

TEST(Replay, EmbedOfTheRawImageIsBitIdenticalToTheRecordedReplay) {
  const BundleFixture fixture;
  IrEmbedder embedder = load_reference(fixture);
  const auto recorded = inspect::embed_recorded(embedder);
  ASSERT_TRUE(recorded.ok());
  const std::vector<float> rgb(fixture.model().input_chw.begin(), fixture.model().input_chw.begin() + 3 * 64);
  const auto embedded = embedder.embed(face_of(rgb, 3));
  ASSERT_TRUE(embedded.ok()) << embedded.error().message;
  EXPECT_EQ(embedded.value(), recorded.value());
  // Passing all 8 (zero-padded) channels is the same input.
  const auto all = embedder.embed(face_of(fixture.model().input_chw, 8));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all.value(), recorded.value());
}

TEST(Replay, RepeatsBatchesAndThreadCountsAgreeExactly) {
  const BundleFixture fixture;
  IrEmbedder two = load_reference(fixture, 2), one = load_reference(fixture, 1);
  const auto first = inspect::embed_recorded(two), again = inspect::embed_recorded(two);
  const auto single = inspect::embed_recorded(one);
  ASSERT_TRUE(first.ok() && again.ok() && single.ok());
  EXPECT_EQ(first.value(), again.value());
  EXPECT_EQ(first.value(), single.value());

  const std::vector<float> rgb(fixture.model().input_chw.begin(), fixture.model().input_chw.begin() + 3 * 64);
  std::vector<float> other(rgb.size());
  for (std::size_t i = 0; i < rgb.size(); ++i) other[i] = -rgb[i];
  const std::vector<FaceChw> faces = {face_of(rgb, 3), face_of(other, 3), face_of(rgb, 3)};
  const auto batch = two.embed_batch(faces);
  ASSERT_TRUE(batch.ok()) << batch.error().message;
  ASSERT_EQ(batch.value().size(), 3u);
  EXPECT_EQ(batch.value()[0], first.value());
  EXPECT_EQ(batch.value()[2], first.value());
  const auto flipped = two.embed(faces[1]);
  ASSERT_TRUE(flipped.ok());
  EXPECT_EQ(batch.value()[1], flipped.value());
  EXPECT_NE(batch.value()[1], first.value());
  const auto empty = two.embed_batch({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty.value().empty());
}

TEST(Replay, WrongInputsAreInputErrorsSayingWhatWasExpected) {
  const BundleFixture fixture;
  IrEmbedder embedder = load_reference(fixture);
  const std::vector<float> small(3 * 4 * 4, 0.5f), nine(9 * 64, 0.5f), short_data(10, 0.5f);

  const auto wrong_size = embedder.embed({small, 3, 4, 4});
  ASSERT_FALSE(wrong_size.ok());
  EXPECT_EQ(wrong_size.error().kind, ErrorKind::Input);
  EXPECT_THAT(wrong_size.error().message, HasSubstr("expects 8x8"));

  const auto too_many = embedder.embed({nine, 9, 8, 8});
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().kind, ErrorKind::Input);
  EXPECT_THAT(too_many.error().message, HasSubstr("1..8"));

  const auto zero = embedder.embed({nine, 0, 8, 8});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().kind, ErrorKind::Input);

  const auto truncated = embedder.embed({short_data, 3, 8, 8});
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().kind, ErrorKind::Input);
  EXPECT_THAT(truncated.error().message, HasSubstr("expected 192"));

  // A bad face in a batch fails the whole batch with an Input error; the embedder stays usable.
  const std::vector<float> rgb(3 * 64, 0.25f);
  const std::vector<FaceChw> faces = {{rgb, 3, 8, 8}, {small, 3, 4, 4}};
  const auto batch = embedder.embed_batch(faces);
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(batch.error().kind, ErrorKind::Input);
  EXPECT_TRUE(embedder.embed({rgb, 3, 8, 8}).ok());
}

// Buffer ids are the exporter's choice (spec §9): any integers, reused ids, in-place steps.
// Renumbering a valid manifest must not change the embedding by a single bit.
TEST(Replay, BufferNumberingDoesNotChangeTheEmbedding) {
  const BundleFixture reference;
  IrEmbedder reference_embedder = load_reference(reference);
  const auto expected = inspect::embed_recorded(reference_embedder);
  ASSERT_TRUE(expected.ok());

  BundleFixture f;
  auto edit = [&](std::string_view needle, std::string_view key, std::string_view value) {
    f.set_field(f.manifest_line_of(needle), key, value);
  };
  // Huge and negative ids instead of 0 and 5.
  edit("input ", "buf", "-9000000000000000000");
  edit("wt=stem.wt", "in", "-9000000000000000000");
  edit("add ", "out", "123456789012");
  edit("subsample ", "in", "123456789012");
  // Subsample in place: buffer 6 disappears, the head reads the subsampled buffer under the same id.
  edit("subsample ", "out", "123456789012");
  edit("head ", "in", "123456789012");
  // The shortcut conv overwrites its own input (buffer 1 is not read afterwards).
  edit("wt=sc.wt", "out", "1");
  edit("bias buf=4", "buf", "1");
  edit("add ", "b", "1");
  f.flush();

  IrEmbedder renumbered_embedder = load_reference(f);
  const auto renumbered = inspect::embed_recorded(renumbered_embedder);
  ASSERT_TRUE(renumbered.ok());
  EXPECT_EQ(renumbered.value(), expected.value());
}

// The smallest valid network: the input straight into the head (no conv at all). The head's
// formula (spec §6: channel-major flatten, f32 sum in order i = 0..k-1, then + b2) is exact.
TEST(Replay, InputStraightIntoTheHeadFollowsTheHeadFormulaExactly) {
  BundleFixture f;
  const int input = f.manifest_line_of("input ");
  for (int line = f.manifest_line_of("head ") - 1; line > input; --line) f.erase_manifest_line(line);
  const std::size_t k = 8 * 8 * 8, n = 16;
  std::vector<float> bT(k * n);
  for (std::size_t i = 0; i < bT.size(); ++i) bT[i] = naive_round_bf16(std::sin(static_cast<float>(i)) * 0.1f);
  f.add_tensor("head0.bT", "bf16", "512,16", bf16_bytes(bT));
  f.replace_manifest_line(input + 1, "head in=0 c=8 h=8 w=8 k=512 n=16 bT=head0.bT b2=head.b2");
  f.flush();

  IrEmbedder embedder = load_reference(f);
  EXPECT_EQ(inspect::conv_dispatches(embedder), 0);
  const auto e = inspect::embed_recorded(embedder);
  ASSERT_TRUE(e.ok()) << e.error().message;
  const std::vector<float>& x = f.model().input_chw;  // channel-major raw f32: ref.input holds it rounded
  for (std::size_t j = 0; j < n; ++j) {
    float acc = 0.0f;
    for (std::size_t i = 0; i < k; ++i) acc += naive_round_bf16(x[i]) * bT[i * n + j];
    EXPECT_EQ(e.value()[j], f.model().head_b2[j] + acc) << j;
  }
}

// cpu-reference sessions each own a device and their scratch: four of them on one model, in four
// threads, give exactly one session's embeddings (tests/cpu/session_test.cpp does the same for cpu).
TEST(Replay, ConcurrentSessionsOfOneModelGiveOneSessionsResults) {
  const BundleFixture fixture;
  IrEmbedder alone = load_reference(fixture, 1);
  const std::vector<float> rgb(fixture.model().input_chw.begin(), fixture.model().input_chw.begin() + 3 * 64);
  std::vector<float> other(rgb.size());
  for (std::size_t i = 0; i < rgb.size(); ++i) other[i] = -rgb[i];
  const std::vector<FaceChw> faces = {face_of(rgb, 3), face_of(other, 3)};
  const auto expected = alone.embed_batch(faces);
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  ASSERT_NE(expected.value()[0], expected.value()[1]);

  constexpr int kSessions = 4;
  std::vector<std::vector<Embedding>> singles(kSessions), batches(kSessions);
  std::vector<std::thread> threads;
  for (int s = 0; s < kSessions; ++s)
    threads.emplace_back([&, s] {
      Result<Session> session = Session::create(alone.shared_model());
      if (!session) return;
      for (int round = 0; round < 20; ++round) {
        auto single = session.value().embed(faces[static_cast<std::size_t>(s % 2)]);
        auto batch = session.value().embed_batch(faces);
        if (single) singles[s].push_back(std::move(single).value());
        if (batch) batches[s] = std::move(batch).value();
      }
    });
  for (std::thread& t : threads) t.join();
  for (int s = 0; s < kSessions; ++s) {
    ASSERT_EQ(singles[s].size(), 20u) << "session " << s << " failed";
    for (const Embedding& e : singles[s]) EXPECT_EQ(e, expected.value()[static_cast<std::size_t>(s % 2)]) << s;
    EXPECT_EQ(batches[s], expected.value()) << "session " << s;
  }
}

TEST(Replay, MovedEmbedderKeepsWorking) {
  const BundleFixture fixture;
  IrEmbedder original = load_reference(fixture);
  const auto before = inspect::embed_recorded(original);
  IrEmbedder moved = std::move(original);
  const auto after = inspect::embed_recorded(moved);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(before.value(), after.value());
}

}  // namespace
}  // namespace taconite::testing
