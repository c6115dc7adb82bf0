#include "npu/direct/start_cu_packet.hpp"

#include "common/failure.hpp"

namespace taconite::npu {

StartCuPacket build_start_cu_packet(std::uint64_t instruction_address, std::uint32_t ninstr,
                                    std::span<const std::uint64_t> buffer_addresses) {
  if (buffer_addresses.size() > kMaxKernelBuffers)
    fail(ErrorKind::Device, "npu-direct: an MLIR_AIE kernel takes at most 5 buffers, got " +
                                std::to_string(buffer_addresses.size()));
  StartCuPacket packet{};
  packet[0] = kStartCuHeader;
  packet[1] = kCuMask;
  packet[2] = kMlirAieOpcode;
  packet[3] = 0;
  packet[4] = static_cast<std::uint32_t>(instruction_address);
  packet[5] = static_cast<std::uint32_t>(instruction_address >> 32);
  packet[6] = ninstr;
  // The u64 arguments at regmap 0x14, 0x1C, ... are only 4-byte aligned: two u32 words each.
  for (std::size_t i = 0; i < buffer_addresses.size(); ++i) {
    packet[7 + 2 * i] = static_cast<std::uint32_t>(buffer_addresses[i]);
    packet[8 + 2 * i] = static_cast<std::uint32_t>(buffer_addresses[i] >> 32);
  }
  return packet;
}

}  // namespace taconite::npu
