#include "npu/kernel_files.hpp"

#include <fstream>
#include <iterator>
#include <string>

#include "common/failure.hpp"

namespace taconite::npu {

void require_npu_kernels(const plan::Plan& plan) {
  if (!plan.npu_kernels) fail(ErrorKind::Device, "imported for the CPU: no NPU kernels");
}

std::vector<std::byte> read_kernel_file(const std::filesystem::path& path, std::string_view what) {
  std::error_code error;
  const bool regular = std::filesystem::is_regular_file(path, error);
  if (!regular) fail(ErrorKind::Device, path.string() + ": the " + std::string(what) + " is not a regular file");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail(ErrorKind::Device, path.string() + ": cannot open the " + std::string(what));
  const std::streamoff size = in.tellg();
  if (size < 0) fail(ErrorKind::Device, path.string() + ": cannot size the " + std::string(what));
  if (static_cast<std::uint64_t>(size) > kMaxKernelFileBytes)
    fail(ErrorKind::Device, path.string() + ": the " + std::string(what) + " is " + std::to_string(size) +
                                " bytes; a kernel file may hold at most " + std::to_string(kMaxKernelFileBytes >> 20) +
                                " MiB");
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) fail(ErrorKind::Device, path.string() + ": read error in the " + std::string(what));
  return bytes;
}

std::vector<std::byte> read_instruction_stream(const std::filesystem::path& path) {
  std::vector<std::byte> bytes = read_kernel_file(path, "instruction stream");
  if (bytes.empty() || bytes.size() % 4 != 0)
    fail(ErrorKind::Device, path.string() + ": instruction stream is " + std::to_string(bytes.size()) +
                                " bytes; expected a non-zero multiple of 4 (32-bit words)");
  return bytes;
}

}  // namespace taconite::npu
