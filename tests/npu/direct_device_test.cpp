// npu-direct as a ConvDevice on the simulated amdxdna device: exact results, the context cache,
// every injected fault, and no leaked fd, mapping, BO or context.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "common/failure.hpp"
#include "common/settings.hpp"
#include "conv_plan_fixture.hpp"
#include "npu/direct/npu_direct_device.hpp"
#include "replay/cpu_reference_device.hpp"
#include "scoped_env.hpp"
#include "sim_amdxdna.hpp"

namespace taconite {
namespace {

using npu_test::ConvCase;
using npu_test::ConvPlanFixture;
using npu_test::ScopedEnv;

const std::vector<ConvCase> kCases = {
    {3, 8, 16, 6, 7, 8, 8},     // 3x3, width padded 7 -> 8
    {1, 16, 8, 5, 14, 16, 16},  // 1x1, width padded 14 -> 16
    {3, 16, 16, 4, 4, 4, 4},
};

int open_fd_count() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

class DirectDeviceTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(open_fd_count(), fds_at_start_) << "real file descriptors leaked (simulator memfds)";
    EXPECT_EQ(sim_->counters().leaks(), "") << "simulator resources still live at the end of the test";
  }
  void expect_clean_protocol() {
    for (const std::string& v : sim_->violations()) ADD_FAILURE() << "protocol violation: " << v;
  }
  // What a load resolves for npu-direct (the environment included), on the simulator.
  npu::NpuSettings settings() const {
    LoadOptions options;
    options.npu_driver = sim::driver_factory(sim_);
    return resolve_settings(options).npu;
  }
  std::string device_error(const std::function<void()>& call, ErrorKind kind = ErrorKind::Device) {
    try {
      call();
    } catch (const Failure& failure) {
      EXPECT_EQ(failure.error().kind, kind);
      return failure.error().message;
    }
    ADD_FAILURE() << "expected a " << to_string(kind) << " failure";
    return {};
  }

  int fds_at_start_ = open_fd_count();
  std::shared_ptr<sim::SimAmdxdna> sim_ = std::make_shared<sim::SimAmdxdna>();
  ConvPlanFixture fixture_{kCases};
};

TEST_F(DirectDeviceTest, EveryDispatchEqualsCpuReferenceBitForBit) {
  auto reference = replay::make_cpu_reference_device(1);
  const auto expected = npu_test::run_all(*reference, fixture_);
  {
    auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
    EXPECT_EQ(device->name(), "npu-direct");
    for (int pass = 0; pass < 2; ++pass) {  // the second pass hits resident contexts
      const auto actual = npu_test::run_all(*device, fixture_);
      for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(actual[i], expected[i]) << "dispatch " << i;
    }
  }
  const sim::SimCounters c = sim_->counters();
  EXPECT_EQ(c.computed, 6u);
  EXPECT_EQ(c.max_in_flight, 1);
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, WordsUnitIsWhatTheSimulatorChecks) {
  // The simulated firmware expects bytes (the project default); the words setting must then be
  // refused as a malformed packet, proving the unit reaches packet word 6.
  ScopedEnv words("TACONITE_NINSTR_UNIT", "words");
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  std::vector<numerics::bf16_t> out;
  const std::string message = device_error([&] { device->run(fixture_.dispatch(0, out)); });
  EXPECT_NE(message.find("state 5"), std::string::npos) << message;
  ASSERT_EQ(sim_->violations().size(), 1u);
  EXPECT_NE(sim_->violations()[0].find("ninstr 16, expected 64"), std::string::npos) << sim_->violations()[0];
}

TEST_F(DirectDeviceTest, WordsUnitWhenTheFirmwareWantsWords) {
  sim_ = std::make_shared<sim::SimAmdxdna>(sim::SimConfig{.ninstr_unit = npu::NinstrUnit::Words});
  ScopedEnv words("TACONITE_NINSTR_UNIT", "words");
  auto reference = replay::make_cpu_reference_device(1);
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  EXPECT_EQ(npu_test::run_all(*device, fixture_), npu_test::run_all(*reference, fixture_));
  device.reset();
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, WaitDeadlineIsAbsoluteAndFollowsTheTimeoutOption) {
  ScopedEnv timeout("TACONITE_NPU_TIMEOUT_MS", "5000");
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  std::vector<numerics::bf16_t> out;
  device->run(fixture_.dispatch(0, out));
  // The deadline was CLOCK_MONOTONIC "now + 5 s" when the simulator received it (a relative
  // 5 s would be far in the past and flagged as a violation).
  const std::int64_t budget = sim_->counters().last_wait_budget_ns;
  EXPECT_GT(budget, std::int64_t{4'000'000'000});
  EXPECT_LE(budget, std::int64_t{5'000'000'000});
  device.reset();
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, SmallCacheEvictsAndStillComputesCorrectly) {
  ScopedEnv cap("TACONITE_CTX_CACHE", "2");
  ScopedEnv timing("TACONITE_TIMING", "1");
  auto reference = replay::make_cpu_reference_device(1);
  const auto expected = npu_test::run_all(*reference, fixture_);
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  for (int pass = 0; pass < 2; ++pass) EXPECT_EQ(npu_test::run_all(*device, fixture_), expected);
  EXPECT_LE(sim_->counters().contexts, 2);
  ::testing::internal::CaptureStderr();
  device.reset();
  const std::string report = ::testing::internal::GetCapturedStderr();
  // 3 contexts cycling through 2 slots: every acquire misses -> 6 loads, 4 evictions, 0 hits.
  EXPECT_NE(report.find("taconite npu-direct: loads=6 hits=0 evictions=4 runs=6 "), std::string::npos) << report;
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, RefusedContextEvictsOneMoreAndRetries) {
  // The device has room for 2 contexts only (another process holds the rest): the third load is
  // refused with EINVAL, the cache evicts the least recent and the retry succeeds.
  sim_ = std::make_shared<sim::SimAmdxdna>(sim::SimConfig{.context_limit = 2});
  auto reference = replay::make_cpu_reference_device(1);
  const auto expected = npu_test::run_all(*reference, fixture_);
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  EXPECT_EQ(npu_test::run_all(*device, fixture_), expected);
  EXPECT_GE(sim_->counters().refused_contexts, 1u);
  EXPECT_EQ(sim_->counters().contexts, 2);
  device.reset();
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, RefusalWithEmptyCacheFailsWithTheDriversError) {
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  sim_->set_faults({.refuse_contexts = 1});
  std::vector<numerics::bf16_t> out;
  const std::string message = device_error([&] { device->run(fixture_.dispatch(0, out)); });
  EXPECT_NE(message.find("CREATE_HWCTX failed: EINVAL"), std::string::npos) << message;
  EXPECT_NE(message.find("16-context cap"), std::string::npos) << message;
  EXPECT_NE(message.find("0 hardware contexts in use on the device"), std::string::npos) << message;
  // Healthy afterwards: the next run loads the context and computes.
  auto reference = replay::make_cpu_reference_device(1);
  std::vector<numerics::bf16_t> expected;
  reference->run(fixture_.dispatch(0, expected));
  device->run(fixture_.dispatch(0, out));
  EXPECT_EQ(out, expected);
  device.reset();
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, SeventeenthContextOfTheDeviceIsRefused) {
  // Two embedders in one process, each with a cache of 16, on a 16-context device: the second
  // one's refusals are absorbed by evicting its own contexts.
  std::vector<ConvCase> many(9, ConvCase{1, 8, 8, 2, 4, 4, 4});
  ConvPlanFixture fixture(many);
  auto first = npu::make_npu_direct_device(fixture.plan(), settings());
  auto second = npu::make_npu_direct_device(fixture.plan(), settings());
  npu_test::run_all(*first, fixture);
  npu_test::run_all(*second, fixture);
  EXPECT_EQ(sim_->counters().contexts, 16);
  EXPECT_GE(sim_->counters().refused_contexts, 2u);
  first.reset();
  second.reset();
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, MissingDeviceNodeNamesOpenAndErrno) {
  sim_->set_faults({.missing_device = true});
  const std::string message = device_error([&] { npu::make_npu_direct_device(fixture_.plan(), settings()); });
  EXPECT_NE(message.find("open(/dev/accel/accel0) failed: ENOENT"), std::string::npos) << message;
  EXPECT_NE(message.find("amdxdna driver loaded"), std::string::npos) << message;
}

TEST_F(DirectDeviceTest, DevicePathComesFromTheEnvironment) {
  ScopedEnv path("TACONITE_NPU_DEVICE", "/dev/accel/accel7");
  const std::string message = device_error([&] { npu::make_npu_direct_device(fixture_.plan(), settings()); });
  EXPECT_NE(message.find("open(/dev/accel/accel7) failed: ENOENT"), std::string::npos) << message;
}

TEST_F(DirectDeviceTest, CommandEndingInErrorIsReportedAndTheNextRunWorks) {
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  sim_->set_faults({.error_commands = 1});
  std::vector<numerics::bf16_t> out, expected;
  const std::string message = device_error([&] { device->run(fixture_.dispatch(1, out)); });
  EXPECT_NE(message.find("EXEC_CMD run of context 'conv1' (manifest.txt:101) finished in state 5 ERROR"),
            std::string::npos)
      << message;
  replay::make_cpu_reference_device(1)->run(fixture_.dispatch(1, expected));
  device->run(fixture_.dispatch(1, out));
  EXPECT_EQ(out, expected);
  device.reset();
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, CommandThatNeverCompletesTimesOutAtTheAbsoluteDeadline) {
  ScopedEnv timeout("TACONITE_NPU_TIMEOUT_MS", "30");
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  sim_->set_faults({.hang_commands = 1});
  std::vector<numerics::bf16_t> out, expected;
  const std::string message = device_error([&] { device->run(fixture_.dispatch(0, out)); });
  EXPECT_NE(message.find("SYNCOBJ_TIMELINE_WAIT failed: ETIME"), std::string::npos) << message;
  EXPECT_NE(message.find("not finished within 30 ms"), std::string::npos) << message;
  EXPECT_EQ(sim_->counters().contexts, 0);  // the hung context was destroyed (the job aborted)
  replay::make_cpu_reference_device(1)->run(fixture_.dispatch(0, expected));
  device->run(fixture_.dispatch(0, out));
  EXPECT_EQ(out, expected);
  device.reset();
  expect_clean_protocol();  // in particular: no BO of the hung job was closed before its context
}

TEST_F(DirectDeviceTest, InterruptedIoctlsAreRetried) {
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  std::vector<numerics::bf16_t> out, expected;
  replay::make_cpu_reference_device(1)->run(fixture_.dispatch(2, expected));
  sim_->set_faults({.eintr = 3});
  device->run(fixture_.dispatch(2, out));
  EXPECT_EQ(out, expected);
  EXPECT_EQ(sim_->counters().eintr_injected, 3u);
  device.reset();
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, EndlessInterruptionsFailCleanly) {
  auto device = npu::make_npu_direct_device(fixture_.plan(), settings());
  std::vector<numerics::bf16_t> out, expected;
  device->run(fixture_.dispatch(0, out));  // context resident
  sim_->set_faults({.eintr = 1000});
  const std::string message = device_error([&] { device->run(fixture_.dispatch(0, out)); });
  EXPECT_NE(message.find("EXEC_CMD failed: EINTR"), std::string::npos) << message;
  sim_->set_faults({});
  replay::make_cpu_reference_device(1)->run(fixture_.dispatch(0, expected));
  device->run(fixture_.dispatch(0, out));
  EXPECT_EQ(out, expected);
  device.reset();
  expect_clean_protocol();
}

TEST_F(DirectDeviceTest, BadCacheCapacityIsALoadError) {
  ScopedEnv cap("TACONITE_CTX_CACHE", "0");
  const std::string message = device_error([&] { settings(); }, ErrorKind::Input);
  EXPECT_NE(message.find("TACONITE_CTX_CACHE='0'"), std::string::npos) << message;
}

}  // namespace
}  // namespace taconite
