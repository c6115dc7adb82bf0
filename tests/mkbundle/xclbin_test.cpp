// The placeholder xclbin, read back with the offsets of spec npu-direct.md §5 (parsed here
// independently of the writer's own constants).
#include <gtest/gtest.h>

#include <cstring>

#include "placeholder_xclbin.hpp"

namespace taconite::mkbundle {
namespace {

template <typename T>
T at(const std::vector<std::uint8_t>& b, std::size_t off) {
  EXPECT_LE(off + sizeof(T), b.size());
  T v{};
  if (off + sizeof(T) <= b.size()) std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

std::string cstring(const std::vector<std::uint8_t>& b, std::size_t off) {
  std::string s;
  while (off < b.size() && b[off] != 0) s += static_cast<char>(b[off++]);
  return s;
}

struct Section {
  std::uint32_t kind;
  std::string name;
  std::uint64_t offset, size;
};

std::vector<Section> sections(const std::vector<std::uint8_t>& b) {
  std::vector<Section> out;
  const std::uint32_t n = at<std::uint32_t>(b, 448);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::size_t h = 456 + 40 * i;
    out.push_back({at<std::uint32_t>(b, h), cstring(b, h + 4), at<std::uint64_t>(b, h + 24), at<std::uint64_t>(b, h + 32)});
  }
  return out;
}

TEST(PlaceholderXclbin, HeaderAndSectionTable) {
  const std::vector<std::uint8_t> b = build_placeholder_xclbin({});
  ASSERT_GE(b.size(), 536u);
  EXPECT_EQ(std::memcmp(b.data(), "xclbin2\0", 8), 0);
  EXPECT_EQ(at<std::uint64_t>(b, 304), b.size()) << "axlf_header.m_length";
  EXPECT_EQ(at<std::uint8_t>(b, 330), 2) << "versionMajor";
  const std::vector<Section> s = sections(b);
  ASSERT_EQ(s.size(), 2u);
  for (const Section& sec : s) {
    EXPECT_LE(sec.offset + sec.size, b.size());
    EXPECT_EQ(sec.offset % 8, 0u);
    EXPECT_GE(sec.offset, 456u + 40 * s.size()) << "sections follow the headers";
  }
  EXPECT_EQ(s[0].kind, 32u);
  EXPECT_EQ(s[0].name, "AIE_PARTITION");
  EXPECT_EQ(s[1].kind, 8u);
  EXPECT_EQ(s[1].name, "IP_LAYOUT");
}

TEST(PlaceholderXclbin, AiePartitionHasOnePdiAndOneDpuCdoGroup) {
  const std::vector<std::uint8_t> b = build_placeholder_xclbin({});
  const std::size_t S = sections(b).at(0).offset;
  EXPECT_EQ(at<std::uint32_t>(b, S + 8), 2048u) << "operations_per_cycle";
  EXPECT_EQ(at<std::uint16_t>(b, S + 32), 4u) << "column_width";
  ASSERT_EQ(at<std::uint32_t>(b, S + 40), 1u) << "start_columns.count";
  EXPECT_EQ(at<std::uint32_t>(b, S + at<std::uint32_t>(b, S + 44)), 0u) << "start_columns[0]";
  ASSERT_EQ(at<std::uint32_t>(b, S + 120), 1u) << "aie_pdi.count";
  const std::size_t pdi = S + at<std::uint32_t>(b, S + 124);
  const std::uint32_t pdi_size = at<std::uint32_t>(b, pdi + 16), pdi_offset = at<std::uint32_t>(b, pdi + 20);
  ASSERT_EQ(pdi_size, 64u);
  const std::vector<std::uint8_t> image(b.begin() + static_cast<long>(S + pdi_offset),
                                        b.begin() + static_cast<long>(S + pdi_offset + pdi_size));
  EXPECT_EQ(image, default_placeholder_pdi());
  EXPECT_EQ(std::string(image.begin(), image.begin() + 24), "TACONITE-PLACEHOLDER-PDI");
  ASSERT_EQ(at<std::uint32_t>(b, pdi + 24), 1u) << "cdo_groups.count";
  const std::size_t cdo = S + at<std::uint32_t>(b, pdi + 28);
  EXPECT_EQ(cstring(b, S + at<std::uint32_t>(b, cdo)), "DPU");
  EXPECT_EQ(at<std::uint8_t>(b, cdo + 4), 1u) << "PRIMARY";
  EXPECT_EQ(at<std::uint64_t>(b, cdo + 8), 1u) << "pdi_id";
  ASSERT_EQ(at<std::uint32_t>(b, cdo + 16), 1u) << "dpu_kernel_ids.count";
  EXPECT_EQ(at<std::uint64_t>(b, S + at<std::uint32_t>(b, cdo + 20)), 0x901u);
  EXPECT_FALSE(cstring(b, S + at<std::uint32_t>(b, S + 4)).empty()) << "mpo_name";
}

TEST(PlaceholderXclbin, IpLayoutHasOneDpuPsKernel) {
  const std::vector<std::uint8_t> b = build_placeholder_xclbin({});
  const Section ip = sections(b).at(1);
  EXPECT_EQ(ip.size, 88u);
  EXPECT_EQ(at<std::int32_t>(b, ip.offset), 1);
  const std::size_t d = ip.offset + 8;
  EXPECT_EQ(at<std::uint32_t>(b, d), 7u) << "IP_PS_KERNEL";
  const std::uint32_t props = at<std::uint32_t>(b, d + 4);
  EXPECT_EQ(props & 3u, 1u) << "ST_DPU";
  EXPECT_EQ((props >> 4) & 3u, 0u) << "FC_DPU";
  EXPECT_EQ((props >> 16) & 0xfffu, 0x901u) << "kernel id";
  EXPECT_EQ(cstring(b, d + 16), "MLIR_AIE:MLIRAIE");
}

TEST(PlaceholderXclbin, CustomPdiAndIdentity) {
  PlaceholderXclbin spec;
  spec.pdi = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  spec.identity = "ctx-a";
  spec.column_width = 1;
  const std::vector<std::uint8_t> a = build_placeholder_xclbin(spec);
  spec.identity = "ctx-b";
  const std::vector<std::uint8_t> b = build_placeholder_xclbin(spec);
  const std::size_t S = sections(a).at(0).offset;
  EXPECT_EQ(at<std::uint16_t>(a, S + 32), 1u);
  const std::size_t pdi = S + at<std::uint32_t>(a, S + 124);
  ASSERT_EQ(at<std::uint32_t>(a, pdi + 16), 13u);
  EXPECT_EQ(a[S + at<std::uint32_t>(a, pdi + 20) + 12], 13);
  // different contexts get different xclbin uuids
  EXPECT_NE(std::memcmp(a.data() + 416, b.data() + 416, 16), 0);
  EXPECT_EQ(a.size(), b.size());
}

}  // namespace
}  // namespace taconite::mkbundle
