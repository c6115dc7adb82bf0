// Dot products for gallery search, chosen once at run time for the CPU: AVX2 + FMA when it has
// them, portable loops otherwise. Debian's FAISS is a generic x86-64 build whose distance loops
// are scalar (~1 G multiply-adds/s per core here); these kernels run at memory speed instead.
#pragma once

#include <cstddef>
#include <cstdint>

namespace taconite::gallery {

// Sum of a[i] * b[i] over n floats.
float dot_f32(const float* a, const float* b, std::size_t n);

// Sum of q[i] * c[i] over n values, exact in 64 bits (int16 queries against int8 codes).
std::int64_t dot_i16_i8(const std::int16_t* q, const std::int8_t* c, std::size_t n);

// The portable kernels, which machines without AVX2 + FMA run (tests check them everywhere).
namespace portable {
float dot_f32(const float* a, const float* b, std::size_t n);
std::int64_t dot_i16_i8(const std::int16_t* q, const std::int8_t* c, std::size_t n);
}  // namespace portable

// Which kernels run: "avx2+fma" or "portable" (benchmarks name it next to their figures).
const char* dot_kernels_isa();

}  // namespace taconite::gallery
