#include "npu/direct/cache_maintenance.hpp"

#include <atomic>
#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace taconite::npu {

#if defined(__x86_64__)
namespace {

constexpr std::uintptr_t kLine = 64;

bool cpu_has_clflushopt() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (ebx & (1u << 23)) != 0;
}

// CLFLUSHOPT flushes lines in parallel (CLFLUSH serialises them): several times faster on ranges.
__attribute__((target("clflushopt"))) void flush_lines_opt(std::uintptr_t begin, std::uintptr_t end) {
  for (std::uintptr_t line = begin; line < end; line += kLine) _mm_clflushopt(reinterpret_cast<void*>(line));
}

void flush_lines(std::uintptr_t begin, std::uintptr_t end) {
  for (std::uintptr_t line = begin; line < end; line += kLine) _mm_clflush(reinterpret_cast<const void*>(line));
}

}  // namespace
#endif

void flush_cache_range(const void* data, std::size_t size) {
  if (size == 0) return;
#if defined(__x86_64__)
  static const bool has_clflushopt = cpu_has_clflushopt();
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(data) & ~(kLine - 1);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(data) + size;
  _mm_mfence();  // earlier stores are globally visible before their lines are flushed
  if (has_clflushopt)
    flush_lines_opt(begin, end);
  else
    flush_lines(begin, end);
  _mm_mfence();  // every flush is complete before the device is told to start
#else
  // The amdxdna NPU only exists on x86-64 APUs; elsewhere keep at least the ordering.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace taconite::npu
