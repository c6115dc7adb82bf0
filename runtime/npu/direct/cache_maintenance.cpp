#include "npu/direct/cache_maintenance.hpp"

#include <atomic>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace taconite::npu {

void flush_cache_range(const void* data, std::size_t size) {
  if (size == 0) return;
#if defined(__x86_64__)
  constexpr std::uintptr_t kLine = 64;
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(data) & ~(kLine - 1);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(data) + size;
  _mm_mfence();
  for (std::uintptr_t line = begin; line < end; line += kLine) _mm_clflush(reinterpret_cast<const void*>(line));
  _mm_mfence();
#else
  // Other architectures: the amdxdna NPU only exists on x86-64 APUs; keep ordering at least.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace taconite::npu
