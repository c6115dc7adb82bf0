// The ERT_START_CU packet (npu-direct.md §8), the ioctl numbers (§2) and the ninstr unit setting.
#include <gtest/gtest.h>

#include "common/failure.hpp"
#include "common/settings.hpp"
#include "npu/direct/start_cu_packet.hpp"
#include "npu/direct/uapi.hpp"
#include "npu/npu_settings.hpp"
#include "scoped_env.hpp"

namespace taconite {
namespace {

TEST(StartCuPacket, MatchesTheWordsXrtSends) {
  // taconite's captured example (spec §8.2): three host addresses, ninstr 0xCB0 bytes.
  const std::uint64_t addresses[3] = {0x7B7D41CDF000, 0x7B7D419BF000, 0x7B7D4169F000};
  const npu::StartCuPacket p = npu::build_start_cu_packet(0x04028000, 0xCB0, addresses);
  const npu::StartCuPacket expected = {0x30010001, 1,          3,          0,          0x04028000, 0,
                                       0xCB0,      0x41CDF000, 0x7B7D,     0x419BF000, 0x7B7D,     0x4169F000,
                                       0x7B7D,     0,          0,          0,          0};
  EXPECT_EQ(p, expected);
}

TEST(StartCuPacket, HeaderFieldsDecodeAsSpecified) {
  const std::uint32_t h = npu::kStartCuHeader;
  EXPECT_EQ(h & 0xF, 1u);             // state NEW
  EXPECT_EQ((h >> 12) & 0x7FF, 16u);  // words after the header, CU mask included
  EXPECT_EQ((h >> 23) & 0x1F, 0u);    // ERT_START_CU
  EXPECT_EQ(h >> 28, 3u);             // ERT_CU
}

TEST(StartCuPacket, HighAddressBitsAndFiveBuffers) {
  const std::uint64_t addresses[5] = {0x1'0000'0002, 0x3'0000'0004, 5, 6, 0xFFFF'FFFF'FFFF'FFFF};
  const npu::StartCuPacket p = npu::build_start_cu_packet(0x1'0400'0000, 16, addresses);
  EXPECT_EQ(p[4], 0x04000000u);
  EXPECT_EQ(p[5], 1u);
  EXPECT_EQ(p[7], 2u);
  EXPECT_EQ(p[8], 1u);
  EXPECT_EQ(p[9], 4u);
  EXPECT_EQ(p[10], 3u);
  EXPECT_EQ(p[15], 0xFFFFFFFFu);
  EXPECT_EQ(p[16], 0xFFFFFFFFu);
  const std::uint64_t six[6] = {};
  EXPECT_THROW(npu::build_start_cu_packet(0, 0, six), Failure);
}

TEST(IoctlNumbers, MatchTheSpecTable) {
  EXPECT_EQ(npu::uapi::kIoctlExecCmd, 0xC0386446ul);
  EXPECT_EQ(npu::uapi::kIoctlSyncobjTimelineWait, 0xC03064CAul);
  EXPECT_EQ(npu::uapi::kIoctlCreateHwctx, 0xC0386440ul);
  EXPECT_EQ(npu::uapi::kIoctlGemClose, 0x40086409ul);
}

TEST(NinstrUnit, BytesByDefaultWordsOnRequest) {
  EXPECT_EQ(npu::kDefaultNinstrUnit, npu::NinstrUnit::Bytes);
  EXPECT_EQ(npu::ninstr_value(0xCB0, npu::NinstrUnit::Bytes), 0xCB0u);
  EXPECT_EQ(npu::ninstr_value(0xCB0, npu::NinstrUnit::Words), 0xCB0u / 4);
  {
    npu_test::ScopedEnv unit("TACONITE_NINSTR_UNIT", "words");
    EXPECT_EQ(resolve_settings(LoadOptions{}).npu.ninstr_unit, npu::NinstrUnit::Words);
  }
  {
    npu_test::ScopedEnv unit("TACONITE_NINSTR_UNIT", "dwords");
    EXPECT_THROW((void)resolve_settings(LoadOptions{}), Failure);
  }
  EXPECT_EQ(resolve_settings(LoadOptions{}).npu.ninstr_unit, npu::NinstrUnit::Bytes);
}

TEST(NpuSettings, Defaults) {
  const npu::NpuSettings s = resolve_settings(LoadOptions{}).npu;
  EXPECT_EQ(s.device_path, "/dev/accel/accel0");
  EXPECT_EQ(s.context_cache_capacity, 16u);
  EXPECT_EQ(s.run_timeout.count(), 10000);
  EXPECT_FALSE(s.driver);
}

// LoadOptions fields win over their environment defaults; bad values of either are Input errors
// naming the option or variable.
TEST(NpuSettings, LoadOptionsOverrideTheEnvironment) {
  npu_test::ScopedEnv cache("TACONITE_CTX_CACHE", "5");
  npu_test::ScopedEnv timeout("TACONITE_NPU_TIMEOUT_MS", "700");
  npu_test::ScopedEnv path("TACONITE_NPU_DEVICE", "/dev/accel/accel3");
  const npu::NpuSettings from_env = resolve_settings(LoadOptions{}).npu;
  EXPECT_EQ(from_env.context_cache_capacity, 5u);
  EXPECT_EQ(from_env.run_timeout.count(), 700);
  EXPECT_EQ(from_env.device_path, "/dev/accel/accel3");

  LoadOptions options;
  options.context_cache = 3;
  options.npu_timeout = std::chrono::milliseconds(40);
  options.npu_device = "/dev/accel/accel9";
  options.timing = false;
  const npu::NpuSettings given = resolve_settings(options).npu;
  EXPECT_EQ(given.context_cache_capacity, 3u);
  EXPECT_EQ(given.run_timeout.count(), 40);
  EXPECT_EQ(given.device_path, "/dev/accel/accel9");
  EXPECT_FALSE(given.timing);

  options.context_cache = 256;
  try {
    (void)resolve_settings(options);
    ADD_FAILURE() << "context_cache 256 accepted";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Input);
    EXPECT_NE(failure.error().message.find("LoadOptions::context_cache 256"), std::string::npos)
        << failure.error().message;
  }
}

}  // namespace
}  // namespace taconite
