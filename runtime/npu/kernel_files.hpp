// Reading a context's kernel files (xclbin, instruction stream) for both NPU paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"

namespace taconite::npu {

// Bundles written by taconite-import carry placeholder kernels (`param npu_kernels none`): both NPU
// paths refuse them with one Failure(Device) line before touching a device, so `auto` moves on to a
// CPU backend.
void require_npu_kernels(const plan::Plan& plan);

// Kernel files are read whole; NPU xclbins and instruction streams are a few MiB, so a larger one
// is refused before anything is allocated for it.
inline constexpr std::uint64_t kMaxKernelFileBytes = std::uint64_t{256} << 20;

// The whole file; throws Failure(Device) naming the file and `what` it is when it is not a regular
// file, is unreadable or is larger than kMaxKernelFileBytes.
std::vector<std::byte> read_kernel_file(const std::filesystem::path& path, std::string_view what);

// An instruction stream (insts.bin): raw 32-bit words, so a non-zero multiple of 4 bytes.
std::vector<std::byte> read_instruction_stream(const std::filesystem::path& path);

}  // namespace taconite::npu
