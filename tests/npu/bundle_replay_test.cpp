// Whole bundles (written by taconite-mkbundle) through the public API with backend npu-direct on
// the simulated amdxdna device: same embedding as cpu-reference, evictions under a small cache,
// clean Device errors for every injected fault, `auto` fallback, and no leaks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "scoped_env.hpp"
#include "sim_amdxdna.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"

namespace taconite {
namespace {

using npu_test::ScopedEnv;

std::filesystem::path bundle_from_env(const char* name) {
  const char* dir = std::getenv(name);
  return dir ? dir : "";
}

class BundleReplayTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(sim_->counters().leaks(), "") << "simulator resources still live at the end of the test";
    for (const std::string& v : sim_->violations()) ADD_FAILURE() << "protocol violation: " << v;
  }
  // Options whose npu-direct runs on the simulator.
  LoadOptions sim_options() const {
    LoadOptions options;
    options.npu_driver = sim::driver_factory(sim_);
    return options;
  }
  IrEmbedder load(const std::filesystem::path& bundle, const std::string& backend) const {
    LoadOptions options = sim_options();
    options.backend = backend;
    Result<IrEmbedder> loaded = IrEmbedder::load(bundle, options);
    if (!loaded) throw std::runtime_error("load(" + backend + "): " + loaded.error().message);
    return std::move(loaded).value();
  }
  static Embedding embed(IrEmbedder& embedder) {
    Result<Embedding> e = inspect::embed_recorded(embedder);
    if (!e) throw std::runtime_error("embed_recorded: " + e.error().message);
    return std::move(e).value();
  }
  // The fault fires during a forward: a Device error naming `call` and `errno_name`, then the
  // next forward succeeds with the reference result.
  void expect_fault_then_recovery(const sim::SimFaults& faults, const std::string& expected) {
    IrEmbedder npu = load(tiny_, "npu-direct");
    const Embedding good = embed(npu);
    sim_->set_faults(faults);
    const Result<Embedding> failed = inspect::embed_recorded(npu);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().kind, ErrorKind::Device);
    EXPECT_NE(failed.error().message.find(expected), std::string::npos) << failed.error().message;
    sim_->set_faults({});
    EXPECT_EQ(embed(npu), good);
  }

  std::filesystem::path ir18_ = bundle_from_env("TACONITE_TEST_IR18");
  std::filesystem::path tiny_ = bundle_from_env("TACONITE_TEST_IR_TINY");
  std::shared_ptr<sim::SimAmdxdna> sim_ = std::make_shared<sim::SimAmdxdna>();
};

TEST_F(BundleReplayTest, Ir18OnTheSimulatorEqualsCpuReference) {
  ASSERT_FALSE(ir18_.empty()) << "TACONITE_TEST_IR18 not set";
  IrEmbedder reference = load(ir18_, "cpu-reference");
  const Embedding expected = embed(reference);
  IrEmbedder npu = load(ir18_, "npu-direct");
  EXPECT_EQ(npu.backend(), "npu-direct");
  const Embedding actual = embed(npu);
  const double c = cosine(actual, expected);
  std::printf("IR-18 npu-direct (simulated) vs cpu-reference: cosine %.5f\n", c);
  EXPECT_GE(c, 0.999995);
  EXPECT_EQ(actual, expected);  // both compute the same math: bit-identical
  EXPECT_EQ(sim_->counters().computed, static_cast<std::uint64_t>(inspect::conv_dispatches(npu)));
}

TEST_F(BundleReplayTest, MoreKernelsThanTheCacheRunCorrectlyWithEvictions) {
  ScopedEnv cap("TACONITE_CTX_CACHE", "3");  // IR-tiny has 8 distinct contexts
  ScopedEnv timing("TACONITE_TIMING", "1");
  IrEmbedder reference = load(tiny_, "cpu-reference");
  const Embedding expected = embed(reference);
  std::string report;
  {
    IrEmbedder npu = load(tiny_, "npu-direct");
    EXPECT_EQ(embed(npu), expected);
    EXPECT_EQ(embed(npu), expected);
    EXPECT_LE(sim_->counters().contexts, 3);
    ::testing::internal::CaptureStderr();
  }
  report = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(report.find("taconite npu-direct: loads="), std::string::npos) << report;
  const auto field = [&](const std::string& name) {
    return std::stoull(report.substr(report.find(name + "=") + name.size() + 1));
  };
  EXPECT_GE(field("evictions"), 5u);
  EXPECT_EQ(field("loads"), field("evictions") + 3);  // everything loaded was evicted but the 3 resident
  EXPECT_EQ(field("runs"), 2u * 20u);
}

TEST_F(BundleReplayTest, ResidentContextsAreReusedAcrossForwards) {
  ScopedEnv timing("TACONITE_TIMING", "1");
  std::string report;
  {
    IrEmbedder npu = load(tiny_, "npu-direct");
    embed(npu);
    embed(npu);
    ::testing::internal::CaptureStderr();
  }
  report = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("loads=8 hits=32 evictions=0 runs=40 "), std::string::npos) << report;
}

TEST_F(BundleReplayTest, MissingDeviceFailsLoadAndAutoFallsBackToCpu) {
  sim_->set_faults({.missing_device = true});
  LoadOptions options = sim_options();
  options.backend = "npu-direct";
  const Result<IrEmbedder> direct = IrEmbedder::load(tiny_, options);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.error().kind, ErrorKind::Device);
  EXPECT_NE(direct.error().message.find("open(/dev/accel/accel0) failed: ENOENT"), std::string::npos)
      << direct.error().message;
  options.backend = "auto";
  Result<IrEmbedder> fallback = IrEmbedder::load(tiny_, options);
  ASSERT_TRUE(fallback.ok()) << fallback.error().message;
  EXPECT_NE(fallback.value().backend(), "npu-direct");
  EXPECT_NE(fallback.value().backend_reason().find("npu-direct unavailable"), std::string::npos)
      << fallback.value().backend_reason();
}

TEST_F(BundleReplayTest, TimingPrintsNothingForAnNpuThatNeverOpened) {
  sim_->set_faults({.missing_device = true});
  ScopedEnv timing("TACONITE_TIMING", "1");
  LoadOptions options = sim_options();
  ::testing::internal::CaptureStderr();
  {
    options.backend = "npu-direct";
    ASSERT_FALSE(IrEmbedder::load(tiny_, options).ok());
    options.backend = "auto";
    Result<IrEmbedder> fallback = IrEmbedder::load(tiny_, options);
    ASSERT_TRUE(fallback.ok()) << fallback.error().message;
  }
  const std::string report = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(report.find("npu-direct:"), std::string::npos) << report;  // no all-zero line for the failed probe
  EXPECT_NE(report.find("taconite: backend="), std::string::npos) << report;  // the backend that ran reports
}

TEST_F(BundleReplayTest, AutoPrefersTheNpuWhenItOpens) {
  LoadOptions options = sim_options();
  Result<IrEmbedder> loaded = IrEmbedder::load(tiny_, options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded.value().backend(), "npu-direct");
}

TEST_F(BundleReplayTest, RefusedContextWithNothingToEvict) {
  // The fault hits the first load of a forward on a fresh embedder (empty cache).
  IrEmbedder npu = load(tiny_, "npu-direct");
  sim_->set_faults({.refuse_contexts = 1});
  const Result<Embedding> failed = inspect::embed_recorded(npu);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("CREATE_HWCTX failed: EINVAL"), std::string::npos) << failed.error().message;
  Result<Embedding> next = inspect::embed_recorded(npu);
  ASSERT_TRUE(next.ok()) << next.error().message;
}

TEST_F(BundleReplayTest, DeviceCapReachedByTwoEmbeddersIsAbsorbedByEviction) {
  // A 10-context device: the first embedder keeps IR-tiny's 8 resident, so the second one's
  // third context is refused (EINVAL, as NPU2 firmware answers the 17th); it evicts its own
  // least recent context and retries, and its forward still equals the first one's.
  sim_ = std::make_shared<sim::SimAmdxdna>(sim::SimConfig{.context_limit = 10});
  IrEmbedder npu = load(tiny_, "npu-direct");
  const Embedding good = embed(npu);
  {
    IrEmbedder other = load(tiny_, "npu-direct");
    EXPECT_EQ(embed(other), good);
    EXPECT_EQ(sim_->counters().contexts, 10);
  }
  EXPECT_GE(sim_->counters().refused_contexts, 6u);
  EXPECT_EQ(embed(npu), good);  // the first embedder's contexts were never touched
}

// Sessions of one npu-direct model share its device (one set of uploaded weights and resident
// contexts) and take turns on it: two threads embedding at once each get cpu-reference's result,
// the device holds IR-tiny's 8 contexts once, and the simulator sees no protocol violation.
TEST_F(BundleReplayTest, ConcurrentSessionsTakeTurnsOnOneDevice) {
  IrEmbedder reference = load(tiny_, "cpu-reference");
  const Embedding expected = embed(reference);
  IrEmbedder npu = load(tiny_, "npu-direct");
  std::vector<std::vector<Embedding>> results(2);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < results.size(); ++t)
    threads.emplace_back([&, t] {
      Result<Session> session = Session::create(npu.shared_model());
      for (int round = 0; session && round < 2; ++round)
        if (Result<Embedding> e = inspect::embed_recorded(session.value())) results[t].push_back(std::move(e).value());
    });
  for (std::thread& thread : threads) thread.join();
  for (const std::vector<Embedding>& per_thread : results) {
    ASSERT_EQ(per_thread.size(), 2u);
    for (const Embedding& e : per_thread) EXPECT_EQ(e, expected);
  }
  EXPECT_EQ(sim_->counters().contexts, 8) << "one device, one set of resident contexts";
}

TEST_F(BundleReplayTest, CommandEndingInError) { expect_fault_then_recovery({.error_commands = 1}, "state 5 ERROR"); }

TEST_F(BundleReplayTest, CommandThatNeverCompletes) {
  ScopedEnv timeout("TACONITE_NPU_TIMEOUT_MS", "40");
  expect_fault_then_recovery({.hang_commands = 1}, "SYNCOBJ_TIMELINE_WAIT failed: ETIME");
}

TEST_F(BundleReplayTest, InterruptedCallsAreRetriedTransparently) {
  IrEmbedder npu = load(tiny_, "npu-direct");
  const Embedding good = embed(npu);
  sim_->set_faults({.eintr = 5});
  EXPECT_EQ(embed(npu), good);
  EXPECT_EQ(sim_->counters().eintr_injected, 5u);
}

TEST_F(BundleReplayTest, EndlessInterruptions) { expect_fault_then_recovery({.eintr = 100000}, "failed: EINTR"); }

}  // namespace
}  // namespace taconite

namespace taconite {
namespace {

// Kernel files are checked at load, so a forward never fails on bundle content and `auto` moves
// on to the CPU instead of picking an NPU backend that would fail on every face.
TEST_F(BundleReplayTest, BrokenKernelFilesAreRefusedAtLoad) {
  ASSERT_FALSE(tiny_.empty()) << "TACONITE_TEST_IR_TINY not set";
  const std::filesystem::path copy = std::filesystem::temp_directory_path() / "taconite-broken-kernels";
  std::filesystem::remove_all(copy);
  std::filesystem::copy(tiny_, copy, std::filesystem::copy_options::recursive);
  for (const auto& file : std::filesystem::directory_iterator(copy / "kernels"))
    if (file.path().extension() == ".xclbin") {
      std::ofstream(file.path(), std::ios::trunc) << "not an xclbin";
      break;
    }
  LoadOptions options = sim_options();
  options.backend = "npu-direct";
  const Result<IrEmbedder> direct = IrEmbedder::load(copy, options);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.error().kind, ErrorKind::Device);
  EXPECT_NE(direct.error().message.find(".xclbin"), std::string::npos) << direct.error().message;
  options.backend = "auto";
  Result<IrEmbedder> fallback = IrEmbedder::load(copy, options);
  ASSERT_TRUE(fallback.ok()) << fallback.error().message;
  EXPECT_NE(fallback.value().backend(), "npu-direct");
  EXPECT_NE(fallback.value().backend_reason().find("npu-direct unavailable"), std::string::npos);
  std::filesystem::remove_all(copy);
}

}  // namespace
}  // namespace taconite
