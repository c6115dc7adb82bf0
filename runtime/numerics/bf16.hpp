// bf16 <-> f32 conversions with the exact rounding of spec §4.1. Header-only so every
// user (replay glue, bundle writer, tests) shares one definition and the compiler can inline it.
#pragma once

#include <bit>
#include <cstdint>

namespace taconite::numerics {

using bf16_t = std::uint16_t;  // raw bf16 bit pattern

inline float bf16_to_f32(bf16_t v) { return std::bit_cast<float>(static_cast<std::uint32_t>(v) << 16); }

// Round-to-nearest-even on the bit pattern; every NaN becomes the canonical 0x7fc0.
// Written without branches so loops over it vectorise.
inline bf16_t f32_to_bf16(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t nan_mask = 0u - static_cast<std::uint32_t>((bits & 0x7fffffffu) > 0x7f800000u);
  const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return static_cast<bf16_t>((rounded & ~nan_mask) | (0x7fc0u & nan_mask));
}

// f32 -> bf16 -> f32: the value an f32 takes after being stored as bf16.
inline float round_to_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }

}  // namespace taconite::numerics
