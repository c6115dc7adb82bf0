#include "xclbin_fixture.hpp"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace taconite::npu_test {

namespace {

template <typename T>
void put(std::vector<std::uint8_t>& b, std::size_t at, T value) {
  if (b.size() < at + sizeof(T)) b.resize(at + sizeof(T), 0);
  std::memcpy(b.data() + at, &value, sizeof(T));
}

std::vector<std::uint8_t> partition_section(const XclbinFixture& spec) {
  const std::size_t pdi_records = 184;
  const std::size_t image = pdi_records + 96 * std::max<std::uint32_t>(spec.pdi_count, 1);
  // Sized once: growing a 184-byte vector here tripped GCC 12's -Warray-bounds false positive at -O3.
  std::vector<std::uint8_t> s(image, 0);
  put<std::uint32_t>(s, 8, spec.operations_per_cycle);
  put<std::uint16_t>(s, 32, spec.column_width);
  put<std::uint32_t>(s, 120, spec.pdi_count);
  put<std::uint32_t>(s, 124, static_cast<std::uint32_t>(pdi_records));
  for (std::uint32_t i = 0; i < std::max<std::uint32_t>(spec.pdi_count, 1); ++i) {
    put<std::uint32_t>(s, pdi_records + 96 * i + 16, spec.pdi_size);
    put<std::uint32_t>(s, pdi_records + 96 * i + 20,
                       static_cast<std::uint32_t>(spec.pdi_out_of_range ? image + 4096 : image));
  }
  const std::vector<std::uint8_t> pdi = fixture_pdi(spec.pdi_size);
  s.insert(s.end(), pdi.begin(), pdi.end());
  return s;
}

std::vector<std::uint8_t> ip_layout_section(const XclbinFixture& spec) {
  std::vector<std::uint8_t> s(8, 0);
  const int entries = spec.dpu_kernels + 1;  // plus one non-DPU entry the parser must skip
  put<std::int32_t>(s, 0, entries);
  for (int i = 0; i < entries; ++i) {
    const std::size_t base = 8 + 80 * static_cast<std::size_t>(i);
    const bool dpu = i < spec.dpu_kernels;
    put<std::uint32_t>(s, base, dpu ? 7u : 1u);  // IP_PS_KERNEL, or IP_KERNEL
    put<std::uint32_t>(s, base + 4, dpu ? (1u | (std::uint32_t{spec.functional} << 4) | (0x901u << 16)) : 0u);
    put<std::uint64_t>(s, base + 8, 0);
    const char name[] = "MLIR_AIE:MLIRAIE";
    s.resize(base + 80, 0);
    std::memcpy(s.data() + base + 16, name, sizeof name);
  }
  return s;
}

}  // namespace

std::vector<std::uint8_t> fixture_pdi(std::uint32_t size) {
  std::vector<std::uint8_t> pdi(size);
  for (std::uint32_t i = 0; i < size; ++i) pdi[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return pdi;
}

std::vector<std::uint8_t> build_xclbin(const XclbinFixture& spec) {
  std::vector<std::vector<std::uint8_t>> sections;
  std::vector<std::uint32_t> kinds;
  if (spec.with_partition) {
    sections.push_back(partition_section(spec));
    kinds.push_back(32);
  }
  if (spec.with_ip_layout) {
    sections.push_back(ip_layout_section(spec));
    kinds.push_back(8);
  }
  std::vector<std::uint8_t> file(456 + 40 * sections.size(), 0);
  std::memcpy(file.data(), spec.bad_magic ? "xclbin1" : "xclbin2", 8);
  put<std::uint32_t>(file, 448, static_cast<std::uint32_t>(sections.size()));
  for (std::size_t i = 0; i < sections.size(); ++i) {
    while (file.size() % 8 != 0) file.push_back(0);
    const std::size_t offset = file.size();
    file.insert(file.end(), sections[i].begin(), sections[i].end());
    put<std::uint32_t>(file, 456 + 40 * i, kinds[i]);
    put<std::uint64_t>(file, 456 + 40 * i + 24, offset);
    put<std::uint64_t>(file, 456 + 40 * i + 32, sections[i].size());
  }
  put<std::uint64_t>(file, 304, file.size());
  return file;
}

void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace taconite::npu_test
