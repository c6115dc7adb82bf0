#include "placeholder_xclbin.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace taconite::mkbundle {

namespace {

// Little-endian writes into a growable byte image.
class Image {
 public:
  std::size_t size() const { return bytes_.size(); }
  void grow_to(std::size_t n) {
    if (bytes_.size() < n) bytes_.resize(n, 0);
  }
  void align(std::size_t a) { grow_to((bytes_.size() + a - 1) / a * a); }
  template <typename T>
  void put(std::size_t at, T value) {
    grow_to(at + sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i)
      bytes_[at + i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * i));
  }
  void put_bytes(std::size_t at, const void* data, std::size_t n) {
    grow_to(at + n);
    std::memcpy(bytes_.data() + at, data, n);
  }
  void put_string(std::size_t at, const std::string& s, std::size_t field) {  // NUL-padded fixed field
    grow_to(at + field);
    std::memcpy(bytes_.data() + at, s.data(), std::min(s.size(), field - 1));
  }
  // Appends a NUL-terminated string at the end; returns its offset.
  std::size_t append_cstring(const std::string& s) {
    const std::size_t at = bytes_.size();
    put_bytes(at, s.c_str(), s.size() + 1);
    return at;
  }
  std::vector<std::uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<std::uint8_t> bytes_;
};

std::uint64_t fnv1a(const std::string& s, std::uint64_t salt) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ salt;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void put_uuid(Image& img, std::size_t at, const std::string& identity, std::uint64_t salt) {
  img.put<std::uint64_t>(at, fnv1a(identity, salt));
  img.put<std::uint64_t>(at + 8, fnv1a(identity, salt + 1));
}

void put_section_header(Image& img, int index, std::uint32_t kind, const std::string& name, std::uint64_t offset,
                        std::uint64_t size) {
  const std::size_t at = axlf::kSectionHeadersOffset + static_cast<std::size_t>(index) * axlf::kSectionHeaderSize;
  img.put<std::uint32_t>(at, kind);
  img.put_string(at + 4, name, 16);
  img.put<std::uint64_t>(at + 24, offset);
  img.put<std::uint64_t>(at + 32, size);
}

// AIE_PARTITION at S: aie_partition (184) | aie_pdi (96) | cdo_group (96) | dpu_kernel_ids u64[1] |
// start_columns u32[1] | PDI image | strings. Every offset inside is relative to S.
void write_aie_partition(Image& img, std::size_t s, const PlaceholderXclbin& spec, const std::vector<std::uint8_t>& pdi) {
  const std::size_t pdi_rec = axlf::kAiePartitionSize;
  const std::size_t cdo = pdi_rec + axlf::kAiePdiSize;
  const std::size_t kernel_ids = cdo + axlf::kCdoGroupSize;
  const std::size_t start_columns = kernel_ids + 8;
  const std::size_t pdi_image = (start_columns + 4 + 15) / 16 * 16;
  img.put_bytes(s + pdi_image, pdi.data(), pdi.size());
  const std::size_t partition_name = img.append_cstring("taconite-placeholder") - s;
  const std::size_t cdo_name = img.append_cstring("DPU") - s;

  img.put<std::uint8_t>(s + 0, 1);  // schema_version
  img.put<std::uint32_t>(s + 4, static_cast<std::uint32_t>(partition_name));
  img.put<std::uint32_t>(s + 8, spec.operations_per_cycle);
  img.put<std::uint64_t>(s + 16, fnv1a(spec.identity, 7));  // inference_fingerprint
  img.put<std::uint64_t>(s + 24, 0);                         // pre_post_fingerprint
  img.put<std::uint16_t>(s + 32, spec.column_width);         // aie_partition_info.column_width
  img.put<std::uint32_t>(s + 40, 1);                         // start_columns.count
  img.put<std::uint32_t>(s + 44, static_cast<std::uint32_t>(start_columns));
  img.put<std::uint32_t>(s + 120, 1);                        // aie_pdi.count
  img.put<std::uint32_t>(s + 124, static_cast<std::uint32_t>(pdi_rec));
  img.put<std::uint32_t>(s + 128, 0);                        // kernel_commit_id

  put_uuid(img, s + pdi_rec, spec.identity, 11);             // aie_pdi.uuid
  img.put<std::uint32_t>(s + pdi_rec + 16, static_cast<std::uint32_t>(pdi.size()));
  img.put<std::uint32_t>(s + pdi_rec + 20, static_cast<std::uint32_t>(pdi_image));
  img.put<std::uint32_t>(s + pdi_rec + 24, 1);               // cdo_groups.count
  img.put<std::uint32_t>(s + pdi_rec + 28, static_cast<std::uint32_t>(cdo));

  img.put<std::uint32_t>(s + cdo + 0, static_cast<std::uint32_t>(cdo_name));
  img.put<std::uint8_t>(s + cdo + 4, 1);                     // cdo_type PRIMARY
  img.put<std::uint64_t>(s + cdo + 8, 0x01);                 // pdi_id
  img.put<std::uint32_t>(s + cdo + 16, 1);                   // dpu_kernel_ids.count
  img.put<std::uint32_t>(s + cdo + 20, static_cast<std::uint32_t>(kernel_ids));
  img.put<std::uint32_t>(s + cdo + 24, 0);                   // pre_cdo_groups.count
  img.put<std::uint32_t>(s + cdo + 28, 0);

  img.put<std::uint64_t>(s + kernel_ids, axlf::kDpuKernelId);
  img.put<std::uint32_t>(s + start_columns, 0);
}

// IP_LAYOUT at S: i32 m_count, 4 pad, then one 80-byte ip_data.
void write_ip_layout(Image& img, std::size_t s, const PlaceholderXclbin& spec) {
  img.put<std::int32_t>(s, 1);
  const std::size_t ip = s + 8;
  img.put<std::uint32_t>(ip, axlf::kIpPsKernel);
  // properties: subtype ST_DPU (1) in bits 0-1, functional FC_DPU (0) in bits 4-5, kernel id in bits 16-27
  img.put<std::uint32_t>(ip + 4, 1u | (0u << 4) | (static_cast<std::uint32_t>(axlf::kDpuKernelId) << 16));
  img.put<std::uint64_t>(ip + 8, 0);
  img.put_string(ip + 16, spec.kernel_name + ":MLIRAIE", 64);
}

}  // namespace

std::vector<std::uint8_t> default_placeholder_pdi() {
  std::vector<std::uint8_t> pdi(64);
  const char tag[] = "TACONITE-PLACEHOLDER-PDI";
  for (std::size_t i = 0; i < pdi.size(); ++i)
    pdi[i] = i < sizeof(tag) - 1 ? static_cast<std::uint8_t>(tag[i]) : (i % 2 ? 0x5A : 0xA5);
  return pdi;
}

std::vector<std::uint8_t> build_placeholder_xclbin(const PlaceholderXclbin& spec) {
  const std::vector<std::uint8_t> pdi = spec.pdi.empty() ? default_placeholder_pdi() : spec.pdi;
  constexpr int kSections = 2;
  Image img;
  img.put_bytes(0, "xclbin2", 8);  // magic, NUL included
  img.put<std::int32_t>(8, -1);    // no signature
  img.put<std::uint64_t>(296, fnv1a(spec.identity, 3));  // unique id
  // axlf_header
  img.put<std::uint64_t>(312, 0);  // timestamp: fixed, so bundles are reproducible
  img.put<std::uint16_t>(328, 0);  // versionPatch
  img.put<std::uint8_t>(330, 2);   // versionMajor
  img.put<std::uint8_t>(331, 0);   // versionMinor
  img.put<std::uint16_t>(332, 0);  // mode: XCLBIN_FLAT
  img.put_string(352, "xilinx_v1_npu2_placeholder", 64);  // platform VBNV
  put_uuid(img, 416, spec.identity, 5);                   // xclbin uuid
  img.put<std::uint32_t>(axlf::kNumSectionsOffset, kSections);
  img.grow_to(axlf::kSectionHeadersOffset + kSections * axlf::kSectionHeaderSize);

  img.align(8);
  const std::size_t partition = img.size();
  img.grow_to(partition + axlf::kAiePartitionSize);
  write_aie_partition(img, partition, spec, pdi);
  const std::size_t partition_size = img.size() - partition;

  img.align(8);
  const std::size_t ip_layout = img.size();
  write_ip_layout(img, ip_layout, spec);
  const std::size_t ip_layout_size = 8 + axlf::kIpDataSize;

  img.align(8);
  put_section_header(img, 0, axlf::kAiePartition, "AIE_PARTITION", partition, partition_size);
  put_section_header(img, 1, axlf::kIpLayout, "IP_LAYOUT", ip_layout, ip_layout_size);
  img.put<std::uint64_t>(axlf::kLengthOffset, img.size());
  return img.take();
}

void write_placeholder_xclbin(const std::filesystem::path& path, const PlaceholderXclbin& spec) {
  const std::vector<std::uint8_t> bytes = build_placeholder_xclbin(spec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw std::runtime_error(path.string() + ": cannot write (" + std::strerror(errno) + ")");
}

}  // namespace taconite::mkbundle
