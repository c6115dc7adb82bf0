// Writes small AXLF (.xclbin) files for the npu tests, valid by default (npu-direct.md §5) and
// with knobs to produce each malformation the parser must refuse.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace taconite::npu_test {

struct XclbinFixture {
  std::uint32_t operations_per_cycle = 2048;
  std::uint16_t column_width = 4;
  std::uint32_t pdi_count = 1;
  std::uint32_t pdi_size = 256;          // bytes of PDI image
  bool pdi_out_of_range = false;         // PDI image offset past the section end
  bool with_partition = true;
  bool with_ip_layout = true;
  int dpu_kernels = 1;                   // PS_KERNEL/DPU entries in IP_LAYOUT
  std::uint8_t functional = 0;
  bool bad_magic = false;
};

std::vector<std::uint8_t> build_xclbin(const XclbinFixture& spec);
void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);
// The PDI bytes build_xclbin() stores (a fixed pattern of pdi_size bytes).
std::vector<std::uint8_t> fixture_pdi(std::uint32_t size);

}  // namespace taconite::npu_test
