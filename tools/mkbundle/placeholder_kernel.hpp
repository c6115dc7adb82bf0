// The placeholder kernel files the test-bundle writer puts in kernels/. Real IRON instruction
// streams are opaque AIE code; ours carry a small descriptor so the simulated amdxdna device
// (tests/sim) knows which conv a command stands for. Only test bundles have it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace taconite::mkbundle {

inline constexpr std::uint32_t kPlaceholderMagic = 0x4B505354;  // bytes "TSPK"
inline constexpr std::uint32_t kPlaceholderVersion = 1;
inline constexpr std::size_t kPlaceholderWords = 16;

// insts.bin of a placeholder kernel: 16 little-endian u32 words
//   [0] magic  [1] version  [2] kernel (1|3)  [3] icg  [4] oc  [5] h  [6] w  [7] wp  [8] owp  [9..15] 0
struct ConvDescriptor {
  std::uint32_t kernel, icg, oc, h, w, wp, owp;
  friend bool operator==(const ConvDescriptor&, const ConvDescriptor&) = default;
};

inline std::array<std::uint32_t, kPlaceholderWords> encode_descriptor(const ConvDescriptor& d) {
  return {kPlaceholderMagic, kPlaceholderVersion, d.kernel, d.icg, d.oc, d.h, d.w, d.wp, d.owp, 0, 0, 0, 0, 0, 0, 0};
}

inline std::optional<ConvDescriptor> decode_descriptor(std::span<const std::uint32_t> words) {
  if (words.size() < kPlaceholderWords || words[0] != kPlaceholderMagic || words[1] != kPlaceholderVersion)
    return std::nullopt;
  return ConvDescriptor{words[2], words[3], words[4], words[5], words[6], words[7], words[8]};
}

}  // namespace taconite::mkbundle
