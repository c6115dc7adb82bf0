// The ERT_START_CU packet (npu-direct.md §8), the ioctl numbers (§2) and the ninstr unit setting.
#include <gtest/gtest.h>

#include "common/failure.hpp"
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
    EXPECT_EQ(npu::settings_from_environment().ninstr_unit, npu::NinstrUnit::Words);
  }
  {
    npu_test::ScopedEnv unit("TACONITE_NINSTR_UNIT", "dwords");
    EXPECT_THROW(npu::settings_from_environment(), Failure);
  }
  EXPECT_EQ(npu::settings_from_environment().ninstr_unit, npu::NinstrUnit::Bytes);
}

TEST(NpuSettings, Defaults) {
  const npu::NpuSettings s = npu::settings_from_environment();
  EXPECT_EQ(s.device_path, "/dev/accel/accel0");
  EXPECT_EQ(s.context_cache_capacity, 16u);
  EXPECT_EQ(s.run_timeout.count(), 10000);
}

}  // namespace
}  // namespace taconite
