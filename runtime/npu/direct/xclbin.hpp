// The little of an xclbin (AXLF container) the driver needs (npu-direct.md §5): the AIE
// partition's column width and ops/cycle, its single PDI, and the CU function from an optional
// IP_LAYOUT. Anything else this path cannot run is refused with a message naming the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace taconite::npu {

struct XclbinPartition {
  std::uint32_t operations_per_cycle = 0;
  std::uint16_t column_width = 0;
  std::uint8_t cu_function = 0;  // IP_LAYOUT PS kernel "functional" (0 for IRON)
  std::vector<std::byte> pdi;
};

// Section kinds used here (axlf_section_kind).
inline constexpr std::uint32_t kXclbinIpLayout = 8;
inline constexpr std::uint32_t kXclbinAiePartition = 32;

// Throws Failure(Device) "<path>: <what is wrong>".
XclbinPartition parse_xclbin(std::span<const std::byte> file, const std::filesystem::path& path);
XclbinPartition read_xclbin(const std::filesystem::path& path);

}  // namespace taconite::npu
