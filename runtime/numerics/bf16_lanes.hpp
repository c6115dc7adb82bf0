// bf16 arithmetic on GCC vectors for host_glue.cpp's loops. Every helper does, lane by lane,
// exactly what bf16.hpp does for one value, so vector and scalar results are bit-identical.
// Internal to numerics: include only from files compiled with -ffp-contract=off.
#pragma once

#include <cstdint>
#include <cstring>

#include "numerics/bf16.hpp"

namespace taconite::numerics::lanes {

using v8f = float __attribute__((vector_size(32)));
using v8u = std::uint32_t __attribute__((vector_size(32)));
using v8h = std::uint16_t __attribute__((vector_size(16)));
using v16h = std::uint16_t __attribute__((vector_size(32)));

template <typename To, typename From>
inline To bits_as(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &v, sizeof to);
  return to;
}

// f32_to_bf16 of each lane, left in the lane's high 16 bits (the low 16 are unspecified).
inline v8u rne_high(v8f f) {
  const v8u bits = bits_as<v8u>(f);
  const v8u rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  const v8u canonical_nan = v8u{} + 0x7fc00000u;
  return f != f ? canonical_nan : rounded;
}

// round_to_bf16 of each lane: the f32 value after a round trip through bf16.
inline v8f round_bf16(v8f f) { return bits_as<v8f>(rne_high(f) & 0xffff0000u); }

inline v8f load_f32x8(const float* p) {
  v8f f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

inline void store_f32x8(float* p, v8f f) { std::memcpy(p, &f, sizeof f); }

// One pixel: 8 bf16 in natural order.
inline v8f load_bf16x8(const bf16_t* p) {
  v8h half;
  std::memcpy(&half, p, sizeof half);
  return bits_as<v8f>(__builtin_convertvector(half, v8u) << 16);
}

inline void store_bf16x8(bf16_t* p, v8f f) {
  const v8h half = __builtin_convertvector(rne_high(f) >> 16, v8h);
  std::memcpy(p, &half, sizeof half);
}

// Two pixels (16 bf16) widened in AVX2 unpack order, which costs one instruction per half:
// `lo` holds elements 0-3 and 8-11, `hi` elements 4-7 and 12-15. store_bf16x16 undoes the order.
struct Pair {
  v8f lo, hi;
};

inline Pair load_bf16x16(const bf16_t* p) {
  v16h v;
  std::memcpy(&v, p, sizeof v);
  const v16h zero = {};
  return {bits_as<v8f>(__builtin_shufflevector(zero, v, 0, 16, 1, 17, 2, 18, 3, 19, 8, 24, 9, 25, 10, 26, 11, 27)),
          bits_as<v8f>(__builtin_shufflevector(zero, v, 4, 20, 5, 21, 6, 22, 7, 23, 12, 28, 13, 29, 14, 30, 15, 31))};
}

inline void store_bf16x16(bf16_t* p, Pair f) {
  const v16h lo = bits_as<v16h>(rne_high(f.lo)), hi = bits_as<v16h>(rne_high(f.hi));
  const v16h out = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 17, 19, 21, 23, 9, 11, 13, 15, 25, 27, 29, 31);
  std::memcpy(p, &out, sizeof out);
}

// Per-channel constants (8 bf16) laid out to match load_bf16x16 of two pixels of a tiled row.
inline Pair channel_pair(const bf16_t* channels8) {
  bf16_t twice[16];
  std::memcpy(twice, channels8, 8 * sizeof(bf16_t));
  std::memcpy(twice + 8, channels8, 8 * sizeof(bf16_t));
  return load_bf16x16(twice);
}

}  // namespace taconite::numerics::lanes
