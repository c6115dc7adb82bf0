#include "npu/direct/xclbin.hpp"

#include "npu/kernel_files.hpp"

#include <cstring>
#include <optional>
#include <string>

#include "common/failure.hpp"
#include "npu/kernel_files.hpp"

namespace taconite::npu {

namespace {

constexpr std::size_t kNumSectionsOffset = 448;
constexpr std::size_t kSectionHeadersOffset = 456;
constexpr std::size_t kSectionHeaderSize = 40;
constexpr std::size_t kAiePartitionSize = 184;
constexpr std::size_t kAiePdiSize = 96;
constexpr std::size_t kIpDataSize = 80;
constexpr std::uint32_t kIpPsKernel = 7;
constexpr std::uint32_t kSubtypeDpu = 1;
constexpr std::uint32_t kMaxSections = 4096;

// Bounds-checked little-endian reads of one byte range.
class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::filesystem::path& path, std::string what)
      : bytes_(bytes), path_(path), what_(std::move(what)) {}

  template <typename T>
  T at(std::size_t offset) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T))
      refuse(what_ + " is truncated (need byte " + std::to_string(offset + sizeof(T)) + " of " +
             std::to_string(bytes_.size()) + ")");
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }
  std::span<const std::byte> range(std::size_t offset, std::size_t size, const std::string& name) const {
    if (offset > bytes_.size() || bytes_.size() - offset < size)
      refuse(name + " (offset " + std::to_string(offset) + ", " + std::to_string(size) + " bytes) lies outside " +
             what_ + " (" + std::to_string(bytes_.size()) + " bytes)");
    return bytes_.subspan(offset, size);
  }
  const std::filesystem::path& path() const { return path_; }
  [[noreturn]] void refuse(const std::string& message) const {
    fail(ErrorKind::Device, path_.string() + ": " + message);
  }

 private:
  std::span<const std::byte> bytes_;
  std::filesystem::path path_;
  std::string what_;
};

struct Section {
  std::uint32_t kind;
  std::span<const std::byte> bytes;
};

void parse_partition(const Reader& s, XclbinPartition& out) {
  out.operations_per_cycle = s.at<std::uint32_t>(8);
  out.column_width = s.at<std::uint16_t>(32);
  const auto pdi_count = s.at<std::uint32_t>(120);
  const auto pdi_offset = s.at<std::uint32_t>(124);
  if (out.column_width == 0) s.refuse("AIE_PARTITION has column_width 0");
  if (out.operations_per_cycle == 0) s.refuse("AIE_PARTITION has operations_per_cycle 0");
  if (pdi_count != 1)
    s.refuse("AIE_PARTITION has " + std::to_string(pdi_count) + " PDIs; only single-PDI xclbins (aiecc output) are supported");
  const Reader pdi(s.range(pdi_offset, kAiePdiSize, "aie_pdi record"), s.path(), "the aie_pdi record");
  const auto image_size = pdi.at<std::uint32_t>(16);
  const auto image_offset = pdi.at<std::uint32_t>(20);
  if (image_size == 0) s.refuse("the PDI image is empty");
  const std::span<const std::byte> image = s.range(image_offset, image_size, "PDI image");
  out.pdi.assign(image.begin(), image.end());
}

std::uint8_t parse_cu_function(const Reader& s) {
  const auto count = s.at<std::int32_t>(0);
  if (count < 0) s.refuse("IP_LAYOUT has a negative entry count");
  std::optional<std::uint8_t> function;
  for (std::int32_t i = 0; i < count; ++i) {
    const std::size_t base = 8 + static_cast<std::size_t>(i) * kIpDataSize;
    const auto type = s.at<std::uint32_t>(base);
    const auto properties = s.at<std::uint32_t>(base + 4);
    if (type != kIpPsKernel || (properties & 0x3) != kSubtypeDpu) continue;
    if (function) s.refuse("IP_LAYOUT declares more than one DPU kernel; only one CU per context is supported");
    function = static_cast<std::uint8_t>((properties >> 4) & 0x3);
  }
  if (!function) s.refuse("IP_LAYOUT declares no DPU (PS kernel) CU");
  return *function;
}

}  // namespace

XclbinPartition parse_xclbin(std::span<const std::byte> file, const std::filesystem::path& path) {
  const Reader axlf(file, path, "the xclbin");
  static constexpr char kMagic[8] = {'x', 'c', 'l', 'b', 'i', 'n', '2', '\0'};
  if (file.size() < sizeof kMagic || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
    axlf.refuse("not an xclbin (magic is not \"xclbin2\")");
  const auto sections = axlf.at<std::uint32_t>(kNumSectionsOffset);
  if (sections > kMaxSections) axlf.refuse("claims " + std::to_string(sections) + " sections");
  std::optional<Section> partition, ip_layout;
  for (std::uint32_t i = 0; i < sections; ++i) {
    const std::size_t header = kSectionHeadersOffset + i * kSectionHeaderSize;
    const auto kind = axlf.at<std::uint32_t>(header);
    const auto offset = axlf.at<std::uint64_t>(header + 24);
    const auto size = axlf.at<std::uint64_t>(header + 32);
    if (kind != kXclbinAiePartition && kind != kXclbinIpLayout) continue;
    std::optional<Section>& slot = kind == kXclbinAiePartition ? partition : ip_layout;
    const std::string name = kind == kXclbinAiePartition ? "AIE_PARTITION" : "IP_LAYOUT";
    if (slot) axlf.refuse("has more than one " + name + " section");
    if (offset > file.size() || size > file.size()) axlf.refuse(name + " section lies outside the file");
    slot = Section{kind, axlf.range(offset, size, name + " section")};
  }
  if (!partition) axlf.refuse("has no AIE_PARTITION section (not an NPU xclbin?)");
  if (partition->bytes.size() < kAiePartitionSize)
    axlf.refuse("AIE_PARTITION section is " + std::to_string(partition->bytes.size()) + " bytes, expected at least " +
                std::to_string(kAiePartitionSize));
  XclbinPartition out;
  parse_partition(Reader(partition->bytes, path, "the AIE_PARTITION section"), out);
  if (ip_layout) out.cu_function = parse_cu_function(Reader(ip_layout->bytes, path, "the IP_LAYOUT section"));
  return out;
}

XclbinPartition read_xclbin(const std::filesystem::path& path) {
  const std::vector<std::byte> raw = read_kernel_file(path, "xclbin");
  return parse_xclbin(raw, path);
}

}  // namespace taconite::npu
