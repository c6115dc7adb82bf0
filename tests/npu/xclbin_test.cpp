// The xclbin (AXLF) parser: what it extracts and each refusal.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "common/failure.hpp"
#include "npu/direct/xclbin.hpp"
#include "npu/kernel_files.hpp"
#include "xclbin_fixture.hpp"

namespace taconite {
namespace {

using npu_test::XclbinFixture;

npu::XclbinPartition parse(const XclbinFixture& spec) {
  const std::vector<std::uint8_t> bytes = npu_test::build_xclbin(spec);
  return npu::parse_xclbin(std::as_bytes(std::span(bytes)), "k.xclbin");
}

std::string refusal(const XclbinFixture& spec) {
  try {
    parse(spec);
  } catch (const Failure& f) {
    EXPECT_EQ(f.error().kind, ErrorKind::Device);
    EXPECT_EQ(f.error().message.rfind("k.xclbin: ", 0), 0u) << f.error().message;
    return f.error().message;
  }
  ADD_FAILURE() << "accepted a malformed xclbin";
  return {};
}

TEST(Xclbin, ExtractsPartitionPdiAndCuFunction) {
  XclbinFixture spec;
  spec.column_width = 2;
  spec.operations_per_cycle = 4096;
  spec.functional = 0;
  spec.pdi_size = 300;
  const npu::XclbinPartition p = parse(spec);
  EXPECT_EQ(p.column_width, 2);
  EXPECT_EQ(p.operations_per_cycle, 4096u);
  EXPECT_EQ(p.cu_function, 0);
  const std::vector<std::uint8_t> pdi = npu_test::fixture_pdi(300);
  ASSERT_EQ(p.pdi.size(), pdi.size());
  EXPECT_EQ(std::memcmp(p.pdi.data(), pdi.data(), pdi.size()), 0);
}

TEST(Xclbin, IpLayoutIsOptional) {
  XclbinFixture spec;
  spec.with_ip_layout = false;
  EXPECT_EQ(parse(spec).cu_function, 0);
}

TEST(Xclbin, Refusals) {
  XclbinFixture magic;
  magic.bad_magic = true;
  EXPECT_NE(refusal(magic).find("magic"), std::string::npos);
  XclbinFixture no_partition;
  no_partition.with_partition = false;
  EXPECT_NE(refusal(no_partition).find("no AIE_PARTITION"), std::string::npos);
  XclbinFixture two_pdis;
  two_pdis.pdi_count = 2;
  EXPECT_NE(refusal(two_pdis).find("2 PDIs"), std::string::npos);
  XclbinFixture no_pdi;
  no_pdi.pdi_count = 0;
  EXPECT_NE(refusal(no_pdi).find("0 PDIs"), std::string::npos);
  XclbinFixture outside;
  outside.pdi_out_of_range = true;
  EXPECT_NE(refusal(outside).find("PDI image"), std::string::npos);
  XclbinFixture empty_pdi;
  empty_pdi.pdi_size = 0;
  EXPECT_NE(refusal(empty_pdi).find("empty"), std::string::npos);
  XclbinFixture width;
  width.column_width = 0;
  EXPECT_NE(refusal(width).find("column_width 0"), std::string::npos);
  XclbinFixture two_cus;
  two_cus.dpu_kernels = 2;
  EXPECT_NE(refusal(two_cus).find("more than one DPU"), std::string::npos);
  XclbinFixture no_cu;
  no_cu.dpu_kernels = 0;
  EXPECT_NE(refusal(no_cu).find("no DPU"), std::string::npos);
}

TEST(Xclbin, EveryTruncationIsRefusedWithoutReadingPastTheEnd) {
  const std::vector<std::uint8_t> bytes = npu_test::build_xclbin({});
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    const std::span<const std::uint8_t> cut(bytes.data(), n);
    EXPECT_THROW(npu::parse_xclbin(std::as_bytes(cut), "k.xclbin"), Failure) << n;
  }
}

// Kernel files are read whole: an oversized file (sparse here: no disk used) or a directory is
// refused by name before anything is allocated for it.
TEST(KernelFiles, OversizedFilesAndDirectoriesAreRefused) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("taconite-kernel-files-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path big = dir / "big.xclbin";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, npu::kMaxKernelFileBytes + 1);
  const auto refusal_of = [](const std::filesystem::path& path) -> std::string {
    try {
      npu::read_kernel_file(path, "xclbin");
    } catch (const Failure& f) {
      EXPECT_EQ(f.error().kind, ErrorKind::Device);
      return f.error().message;
    }
    ADD_FAILURE() << "read " << path;
    return {};
  };
  const std::string oversized = refusal_of(big);
  EXPECT_NE(oversized.find("big.xclbin: the xclbin is 268435457 bytes; a kernel file may hold at most 256 MiB"),
            std::string::npos)
      << oversized;
  const std::string directory = refusal_of(dir);
  EXPECT_NE(directory.find("is not a regular file"), std::string::npos) << directory;
  std::filesystem::resize_file(big, 8);
  EXPECT_EQ(npu::read_kernel_file(big, "xclbin").size(), 8u) << "a small file is read whole";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace taconite
