#include "simd_dot.hpp"

#include <immintrin.h>

#include <algorithm>

namespace taconite::gallery {

namespace portable {

float dot_f32(const float* a, const float* b, std::size_t n) {
  float sum[4] = {0, 0, 0, 0};  // four chains: the adds do not wait for each other
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) sum[k] += a[i + k] * b[i + k];
  for (; i < n; ++i) sum[0] += a[i] * b[i];
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

std::int64_t dot_i16_i8(const std::int16_t* q, const std::int8_t* c, std::size_t n) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += std::int32_t{q[i]} * c[i];
  return sum;
}

}  // namespace portable

namespace {

__attribute__((target("avx2,fma"))) float horizontal_sum(__m256 v) {
  __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  half = _mm_add_ps(half, _mm_movehl_ps(half, half));
  half = _mm_add_ss(half, _mm_movehdup_ps(half));
  return _mm_cvtss_f32(half);
}

__attribute__((target("avx2,fma"))) float dot_f32_avx2(const float* a, const float* b, std::size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  float sum = horizontal_sum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// Each 32-bit lane adds one pair product sum (|value| <= 2 * 32767 * 128) per 16 values: 256 of
// them (4096 values) stay below 2^31, so the lanes are added into 64 bits every 4096 values.
__attribute__((target("avx2,fma"))) std::int64_t dot_i16_i8_avx2(const std::int16_t* q, const std::int8_t* c,
                                                                 std::size_t n) {
  constexpr std::size_t kLaneSafeValues = 4096;
  std::int64_t sum = 0;
  std::size_t i = 0;
  while (i + 16 <= n) {
    const std::size_t chunk_end = std::min(n, i + kLaneSafeValues);
    __m256i lanes = _mm256_setzero_si256();
    for (; i + 16 <= chunk_end; i += 16) {
      const __m256i codes = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i)));
      const __m256i query = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + i));
      lanes = _mm256_add_epi32(lanes, _mm256_madd_epi16(query, codes));
    }
    alignas(32) std::int32_t lane[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lane), lanes);
    for (std::int32_t v : lane) sum += v;
  }
  for (; i < n; ++i) sum += std::int32_t{q[i]} * c[i];
  return sum;
}

struct Kernels {
  float (*f32)(const float*, const float*, std::size_t);
  std::int64_t (*i16_i8)(const std::int16_t*, const std::int8_t*, std::size_t);
  const char* isa;
};

Kernels choose() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {dot_f32_avx2, dot_i16_i8_avx2, "avx2+fma"};
  return {portable::dot_f32, portable::dot_i16_i8, "portable"};
}

const Kernels& kernels() {
  static const Kernels chosen = choose();
  return chosen;
}

}  // namespace

float dot_f32(const float* a, const float* b, std::size_t n) { return kernels().f32(a, b, n); }

std::int64_t dot_i16_i8(const std::int16_t* q, const std::int8_t* c, std::size_t n) {
  return kernels().i16_i8(q, c, n);
}

const char* dot_kernels_isa() { return kernels().isa; }

}  // namespace taconite::gallery
