// XRT feature detection (npu-xrt.md §2, §8, §11). Include root: $XRT_ROOT/include, on Debian
// /usr/include/xrt. Only xrt_device.h, xrt_kernel.h and xrt_bo.h are included unconditionally so
// the same source compiles against 2.13 (Debian 12) and current XRT; the NPU path needs
// xrt::hw_context from <xrt/xrt_hw_context.h> (XRT >= 2.15).
#pragma once

#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#if __has_include(<xrt/xrt_hw_context.h>)
#include <xrt/xrt_hw_context.h>
#define TACONITE_XRT_HAS_HW_CONTEXT 1
#else
#define TACONITE_XRT_HAS_HW_CONTEXT 0
#endif

// The version of the XRT we build against: XRT_VERSION_CODE (major << 16 | minor).
#if __has_include(<xrt/detail/version-slim.h>)
#include <xrt/detail/version-slim.h>
#elif __has_include(<version.h>)
#include <version.h>
#endif

namespace taconite::npu {

#if defined(XRT_VERSION_CODE)
inline constexpr int kXrtMajor = XRT_VERSION_CODE >> 16;
inline constexpr int kXrtMinor = XRT_VERSION_CODE & 0xFFFF;
#else
inline constexpr int kXrtMajor = 0;  // unknown (no version header)
inline constexpr int kXrtMinor = 0;
#endif

}  // namespace taconite::npu
