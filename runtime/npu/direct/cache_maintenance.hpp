// CPU cache maintenance around NPU DMA (npu-direct.md §7.3): the NPU does not snoop CPU caches,
// so written inputs are written back and outputs invalidated with CLFLUSH per 64-byte line
// (what XRT and taconite do in user space), fenced by MFENCE.
#pragma once

#include <cstddef>

namespace taconite::npu {

// Writes back and invalidates every cache line overlapping [data, data + size).
void flush_cache_range(const void* data, std::size_t size);

}  // namespace taconite::npu
