#include "npu/npu_settings.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/failure.hpp"

namespace taconite::npu {

namespace {

const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : nullptr;
}

std::uint64_t positive_integer(const char* name, std::string_view text, std::uint64_t max) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value == 0 || value > max)
    fail(ErrorKind::Device, std::string(name) + "='" + std::string(text) + "' is not an integer in 1.." +
                                std::to_string(max));
  return value;
}

}  // namespace

NpuSettings settings_from_environment() {
  NpuSettings settings;
  if (const char* path = variable("TACONITE_NPU_DEVICE")) settings.device_path = path;
  if (const char* cap = variable("TACONITE_CTX_CACHE"))
    settings.context_cache_capacity = positive_integer("TACONITE_CTX_CACHE", cap, 255);
  if (const char* unit = variable("TACONITE_NINSTR_UNIT")) {
    const std::string_view text(unit);
    if (text == "words")
      settings.ninstr_unit = NinstrUnit::Words;
    else if (text == "bytes")
      settings.ninstr_unit = NinstrUnit::Bytes;
    else
      fail(ErrorKind::Device, "TACONITE_NINSTR_UNIT='" + std::string(text) + "' must be 'bytes' or 'words'");
  }
  if (const char* ms = variable("TACONITE_NPU_TIMEOUT_MS"))
    settings.run_timeout = std::chrono::milliseconds(positive_integer("TACONITE_NPU_TIMEOUT_MS", ms, 3600000));
  if (const char* timing = variable("TACONITE_TIMING")) settings.timing = std::string_view(timing) == "1";
  return settings;
}

std::uint32_t ninstr_value(std::size_t bytes, NinstrUnit unit) {
  return static_cast<std::uint32_t>(unit == NinstrUnit::Words ? bytes / 4 : bytes);
}

}  // namespace taconite::npu
