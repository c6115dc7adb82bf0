// The environment knobs both NPU backends read once, at device open (spec npu-direct.md
// Decisions, npu-xrt.md §6). Invalid values are load errors, not silent defaults.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace taconite::npu {

enum class NinstrUnit { Bytes, Words };

// Project decision (npu-direct.md Decisions 1, §8.3, UNVERIFIED on hardware): the `ninstr`
// kernel argument is the instruction stream's BYTE count unless TACONITE_NINSTR_UNIT=words.
inline constexpr NinstrUnit kDefaultNinstrUnit = NinstrUnit::Bytes;
inline constexpr std::size_t kDefaultContextCacheCapacity = 16;  // NPU2 hardware-context cap
inline constexpr std::chrono::milliseconds kDefaultRunTimeout{10000};
inline constexpr const char* kDefaultDevicePath = "/dev/accel/accel0";

struct NpuSettings {
  std::string device_path = kDefaultDevicePath;     // TACONITE_NPU_DEVICE
  std::size_t context_cache_capacity = kDefaultContextCacheCapacity;  // TACONITE_CTX_CACHE
  NinstrUnit ninstr_unit = kDefaultNinstrUnit;      // TACONITE_NINSTR_UNIT=bytes|words
  std::chrono::milliseconds run_timeout = kDefaultRunTimeout;  // TACONITE_NPU_TIMEOUT_MS
  bool timing = false;                              // TACONITE_TIMING=1
};

// Reads the variables above; throws Failure(Device) naming a malformed one.
NpuSettings settings_from_environment();

// The `ninstr` value for an instruction stream of `bytes` bytes.
std::uint32_t ninstr_value(std::size_t bytes, NinstrUnit unit);

}  // namespace taconite::npu
