// The 17-word ERT_START_CU command packet for an IRON `MLIR_AIE` kernel (npu-direct.md §8).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace taconite::npu {

inline constexpr std::size_t kPacketWords = 17;
inline constexpr std::size_t kMaxKernelBuffers = 5;  // bo0..bo4
inline constexpr std::uint32_t kMlirAieOpcode = 3;   // "run the instruction stream"

// Header: state NEW (1), count 16 (words after the header incl. the CU mask) at bits 22:12,
// opcode ERT_START_CU (0) at 27:23, type ERT_CU (3) at 31:28 -> 0x30010001 (what XRT sends).
inline constexpr std::uint32_t kStartCuHeader = (3u << 28) | (0u << 23) | (16u << 12) | 1u;
static_assert(kStartCuHeader == 0x30010001);
inline constexpr std::uint32_t kCuMask = 0x1;  // CU index 0

using StartCuPacket = std::array<std::uint32_t, kPacketWords>;

// words: [0] header [1] CU mask [2,3] opcode u64 [4,5] instruction address u64 [6] ninstr
// [7..16] bo0..bo4 device addresses as low/high pairs (unused slots 0). At most 5 buffers.
StartCuPacket build_start_cu_packet(std::uint64_t instruction_address, std::uint32_t ninstr,
                                    std::span<const std::uint64_t> buffer_addresses);

}  // namespace taconite::npu
