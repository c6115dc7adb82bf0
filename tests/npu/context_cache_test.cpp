// The shared resident-context cache: LRU order, capacity, evict-and-retry on refusal.
#include <gtest/gtest.h>

#include <set>

#include "npu/context_cache.hpp"

namespace taconite {
namespace {

// A device with `slots` hardware contexts; loading beyond them is refused.
struct FakeDevice {
  int slots;
  std::set<int> live;
  std::vector<int> destroyed;
};

class FakeContext final : public npu::ResidentContext {
 public:
  FakeContext(FakeDevice& device, int key) : device_(device), key_(key) { device.live.insert(key); }
  ~FakeContext() override {
    device_.live.erase(key_);
    device_.destroyed.push_back(key_);
  }

 private:
  FakeDevice& device_;
  int key_;
};

npu::ContextCache::Loader loader(FakeDevice& device, int key) {
  return [&device, key]() -> std::unique_ptr<npu::ResidentContext> {
    if (static_cast<int>(device.live.size()) >= device.slots)
      throw npu::ContextRefused(ErrorKind::Device, "CREATE_HWCTX failed: EINVAL");
    return std::make_unique<FakeContext>(device, key);
  };
}

TEST(ContextCache, HitsMoveToFrontAndTheLeastRecentIsEvicted) {
  FakeDevice device{16, {}, {}};
  npu::NpuStats stats;
  npu::ContextCache cache(2, stats);
  cache.acquire(1, loader(device, 1));
  cache.acquire(2, loader(device, 2));
  cache.acquire(1, loader(device, 1));  // 1 is now most recent
  cache.acquire(3, loader(device, 3));  // evicts 2
  EXPECT_TRUE(cache.contains(1));
  EXPECT_FALSE(cache.contains(2));
  EXPECT_TRUE(cache.contains(3));
  EXPECT_EQ(device.destroyed, std::vector<int>{2});
  EXPECT_EQ(stats.loads, 3u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.evictions, 1u);
}

TEST(ContextCache, RefusalEvictsOneMoreAndRetries) {
  FakeDevice device{2, {}, {}};  // the device is smaller than the cache
  npu::NpuStats stats;
  npu::ContextCache cache(16, stats);
  cache.acquire(1, loader(device, 1));
  cache.acquire(2, loader(device, 2));
  cache.acquire(3, loader(device, 3));  // refused once, evicts 1, retry succeeds
  EXPECT_FALSE(cache.contains(1));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.loads, 3u);
}

TEST(ContextCache, RefusalWithNothingLeftToEvictPropagatesTheDriversError) {
  FakeDevice device{0, {}, {}};
  npu::NpuStats stats;
  npu::ContextCache cache(16, stats);
  try {
    cache.acquire(1, loader(device, 1));
    FAIL() << "expected a refusal";
  } catch (const npu::ContextRefused& refused) {
    EXPECT_EQ(refused.error().message, "CREATE_HWCTX failed: EINVAL");
  }
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(stats.loads, 0u);
}

TEST(ContextCache, OtherFailuresDoNotEvict) {
  FakeDevice device{16, {}, {}};
  npu::NpuStats stats;
  npu::ContextCache cache(4, stats);
  cache.acquire(1, loader(device, 1));
  EXPECT_THROW(cache.acquire(2, []() -> std::unique_ptr<npu::ResidentContext> {
    throw Failure(ErrorKind::Device, "bad xclbin");
  }),
               Failure);
  EXPECT_TRUE(cache.contains(1));
  EXPECT_EQ(stats.evictions, 0u);
}

TEST(ContextCache, ClearDestroysLeastRecentFirst) {
  FakeDevice device{16, {}, {}};
  npu::NpuStats stats;
  {
    npu::ContextCache cache(4, stats);
    cache.acquire(1, loader(device, 1));
    cache.acquire(2, loader(device, 2));
    cache.acquire(3, loader(device, 3));
  }
  EXPECT_EQ(device.destroyed, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(device.live.empty());
}

}  // namespace
}  // namespace taconite
