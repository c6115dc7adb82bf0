// A minimal but valid AXLF (.xclbin) container for test bundles, laid out exactly as
// spec npu-direct.md §5 describes: the 496-byte axlf header with two section headers, an
// AIE_PARTITION section (one aie_pdi holding a small placeholder PDI, one cdo_group "DPU" as
// aiecc emits) and an IP_LAYOUT section with one PS kernel. Shared with the simulator tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace taconite::mkbundle {

struct PlaceholderXclbin {
  std::string kernel_name = "MLIR_AIE";        // IP_LAYOUT name is "<kernel_name>:MLIRAIE"
  std::uint32_t operations_per_cycle = 2048;   // what aiecc writes
  std::uint16_t column_width = 4;              // a plausible NPU2 partition
  std::vector<std::uint8_t> pdi;               // the PDI image; empty -> a 64-byte recognisable pattern
  std::string identity;                        // hashed into the uuids (e.g. the ctx key)
};

// Offsets a parser must find (also used by tests to check the writer).
namespace axlf {
inline constexpr std::size_t kHeaderOffset = 304;        // axlf_header
inline constexpr std::size_t kLengthOffset = 304;        // u64 m_length
inline constexpr std::size_t kNumSectionsOffset = 448;   // u32
inline constexpr std::size_t kSectionHeadersOffset = 456;
inline constexpr std::size_t kSectionHeaderSize = 40;
inline constexpr std::uint32_t kIpLayout = 8;
inline constexpr std::uint32_t kAiePartition = 32;
inline constexpr std::size_t kAiePartitionSize = 184;
inline constexpr std::size_t kAiePdiSize = 96;
inline constexpr std::size_t kCdoGroupSize = 96;
inline constexpr std::size_t kIpDataSize = 80;
inline constexpr std::uint32_t kIpPsKernel = 7;
inline constexpr std::uint64_t kDpuKernelId = 0x901;
}  // namespace axlf

// The default placeholder PDI: 64 bytes "TACONITE-PLACEHOLDER-PDI" followed by 0xA5/0x5A.
std::vector<std::uint8_t> default_placeholder_pdi();

std::vector<std::uint8_t> build_placeholder_xclbin(const PlaceholderXclbin& spec);

// Throws std::runtime_error naming the file on failure.
void write_placeholder_xclbin(const std::filesystem::path& path, const PlaceholderXclbin& spec);

}  // namespace taconite::mkbundle
