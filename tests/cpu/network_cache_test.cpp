// The cpu backend's networks by batch size: batches rounded up to a few padded sizes, the cache
// evicting the least recently used size, and padded batches embedding like single faces.
#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_cache.hpp"
#include "cpu/cpu_executor.hpp"
#include "cpu/network_cache.hpp"
#include "numerics/bf16.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"

namespace taconite::cpu_test {
namespace {

TEST(BatchBucket, RoundsUpToPowersOfTwoUpToTheLargestPass) {
  EXPECT_EQ(cpu::batch_bucket(0, 8), 1);
  EXPECT_EQ(cpu::batch_bucket(1, 8), 1);
  EXPECT_EQ(cpu::batch_bucket(2, 8), 2);
  EXPECT_EQ(cpu::batch_bucket(3, 8), 4);
  EXPECT_EQ(cpu::batch_bucket(5, 8), 8);
  EXPECT_EQ(cpu::batch_bucket(8, 8), 8);
  EXPECT_EQ(cpu::batch_bucket(9, 8), 8);
  EXPECT_EQ(cpu::batch_bucket(5, 6), 6) << "a largest pass that is not a power of two is a bucket too";
}

TEST(NetworkCache, EvictsTheLeastRecentlyUsedSizeAndKeepsBatchOne) {
  cpu::NetworkCache<int> cache(2);
  std::vector<int> built;
  auto build = [&](int batch) {
    built.push_back(batch);
    return std::make_unique<int>(batch);
  };
  EXPECT_EQ(cache.get(1, build), 1);
  EXPECT_EQ(cache.get(2, build), 2);
  EXPECT_EQ(cache.get(4, build), 4);
  EXPECT_EQ(cache.get(2, build), 2);  // 2 is now more recent than 4
  EXPECT_EQ(cache.get(8, build), 8);  // full: evicts 4, not the smallest (2)
  EXPECT_EQ(cache.sizes(), (std::vector<int>{1, 8, 2}));
  EXPECT_EQ(cache.get(2, build), 2);
  EXPECT_EQ(cache.get(1, build), 1);
  EXPECT_EQ(built, (std::vector<int>{1, 2, 4, 8})) << "cached sizes are not rebuilt";
}

TEST(NetworkCache, AFailedBuildEvictsNothing) {
  cpu::NetworkCache<int> cache(1);
  cache.get(2, [](int batch) { return std::make_unique<int>(batch); });
  EXPECT_THROW(cache.get(4, [](int) -> std::unique_ptr<int> { throw std::runtime_error("no primitive"); }),
               std::runtime_error);
  EXPECT_EQ(cache.sizes(), (std::vector<int>{2}));
}

// The recorded face scaled by `factor`, still tiled bf16 (padding lanes stay zero).
std::vector<numerics::bf16_t> scaled(std::span<const numerics::bf16_t> face, float factor) {
  std::vector<numerics::bf16_t> out(face.begin(), face.end());
  for (numerics::bf16_t& v : out) v = numerics::f32_to_bf16(numerics::bf16_to_f32(v) * factor);
  return out;
}

TEST(CpuBatchBuckets, OddBatchesArePaddedToBucketsAndEmbedLikeSingleFaces) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  const bundle::Bundle bundle = bundle::Bundle::open(dir);
  const plan::Plan plan = plan::build_plan(bundle);
  cpu::Lowering lowering = cpu::lower_plan(plan);
  ASSERT_TRUE(lowering.graph) << lowering.refusal;
  // Direct f32: `auto` may pick f32 on Winograd convs, whose networks run batches face by face.
  const auto backend = cpu::make_cpu_backend(std::move(*lowering.graph), {cpu::CpuOptions::Precision::F32, 2});
  const auto cpu = backend->new_session();
  std::vector<std::vector<numerics::bf16_t>> faces;
  for (int k = 0; k < 7; ++k) faces.push_back(scaled(plan.input_step().recorded, 1.0f - 0.12f * static_cast<float>(k)));
  std::vector<std::span<const numerics::bf16_t>> views(faces.begin(), faces.end());

  for (std::size_t count : {3u, 5u, 7u}) {
    const auto batch = cpu->forward_batch(std::span(views).first(count));
    ASSERT_EQ(batch.size(), count);
    for (std::size_t k = 0; k < count; ++k)
      EXPECT_GE(cosine(batch[k], cpu->forward(views[k])), 0.99999) << "face " << k << " of a batch of " << count;
    EXPECT_NE(batch[0], batch[count - 1]);
  }
  EXPECT_EQ(cpu->cached_batch_sizes(), (std::vector<int>{1, 8, 4})) << "3 runs as 4, 5 and 7 as 8";
  cpu->forward_batch(std::span(views).first(2));
  cpu->forward_batch(std::span(views).first(4));
  EXPECT_EQ(cpu->cached_batch_sizes(), (std::vector<int>{1, 4, 2, 8}));
}

}  // namespace
}  // namespace taconite::cpu_test
