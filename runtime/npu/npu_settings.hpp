// What both NPU backends are configured with (spec npu-direct.md Decisions, npu-xrt.md §6),
// resolved from LoadOptions and their environment defaults by common/settings.cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "taconite/model.hpp"

namespace taconite::npu {

enum class NinstrUnit { Bytes, Words };

// Project decision (npu-direct.md Decisions 1, §8.3, UNVERIFIED on hardware): the `ninstr`
// kernel argument is the instruction stream's BYTE count unless TACONITE_NINSTR_UNIT=words.
inline constexpr NinstrUnit kDefaultNinstrUnit = NinstrUnit::Bytes;
inline constexpr std::size_t kDefaultContextCacheCapacity = 16;  // NPU2 hardware-context cap
inline constexpr std::size_t kMaxContextCacheCapacity = 255;
inline constexpr std::chrono::milliseconds kDefaultRunTimeout{10000};
inline constexpr std::chrono::milliseconds kMaxRunTimeout{3600000};
inline constexpr const char* kDefaultDevicePath = "/dev/accel/accel0";

struct NpuSettings {
  std::string device_path = kDefaultDevicePath;     // LoadOptions::npu_device, TACONITE_NPU_DEVICE
  std::size_t context_cache_capacity = kDefaultContextCacheCapacity;  // ::context_cache, TACONITE_CTX_CACHE
  NinstrUnit ninstr_unit = kDefaultNinstrUnit;      // TACONITE_NINSTR_UNIT=bytes|words
  std::chrono::milliseconds run_timeout = kDefaultRunTimeout;  // ::npu_timeout, TACONITE_NPU_TIMEOUT_MS
  bool timing = false;                              // ::timing, TACONITE_TIMING=1
  NpuDriverFactory driver;                          // ::npu_driver (empty: libc)
};

// The `ninstr` value for an instruction stream of `bytes` bytes.
std::uint32_t ninstr_value(std::size_t bytes, NinstrUnit unit);

}  // namespace taconite::npu
