#include "common/settings.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "common/failure.hpp"
#include "common/threading.hpp"

namespace taconite {

namespace {

// A set, non-empty environment variable, else nullptr.
const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : nullptr;
}

std::string quoted(const char* name, std::string_view text) {
  return std::string(name) + "='" + std::string(text.substr(0, 40)) + "'";
}

// The whole of `text` as an integer in [min, max], else nullopt.
std::optional<std::int64_t> integer_in(std::string_view text, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < min || value > max) return std::nullopt;
  return value;
}

std::string allowed_threads() {
  return "1.." + std::to_string(max_thread_count()) + ", or 0 for all " + std::to_string(hardware_threads()) +
         " hardware threads";
}

// An option's value when given (non-zero), else its variable's when set, else `fallback`; both are
// checked against 1..max.
std::int64_t option_or_variable(std::int64_t option, const char* option_name, const char* variable_name,
                                std::int64_t max, std::int64_t fallback) {
  const std::string range = "1.." + std::to_string(max);
  if (option < 0 || option > max)
    fail(ErrorKind::Input, "LoadOptions::" + std::string(option_name) + " " + std::to_string(option) +
                               " is out of range; allowed " + range + ", or 0 for the default");
  if (option > 0) return option;
  const char* text = variable(variable_name);
  if (text == nullptr) return fallback;
  const std::optional<std::int64_t> value = integer_in(text, 1, max);
  if (!value)
    fail(ErrorKind::Input, "the environment variable " + quoted(variable_name, text) + " is not an integer in " +
                               range + ": unset it or set it in that range");
  return *value;
}

npu::NpuSettings npu_settings(const LoadOptions& options, bool timing) {
  npu::NpuSettings npu;
  if (!options.npu_device.empty()) npu.device_path = options.npu_device;
  else if (const char* path = variable("TACONITE_NPU_DEVICE")) npu.device_path = path;
  npu.context_cache_capacity = static_cast<std::size_t>(
      option_or_variable(options.context_cache, "context_cache", "TACONITE_CTX_CACHE",
                         static_cast<std::int64_t>(npu::kMaxContextCacheCapacity),
                         static_cast<std::int64_t>(npu::kDefaultContextCacheCapacity)));
  npu.run_timeout = std::chrono::milliseconds(option_or_variable(options.npu_timeout.count(), "npu_timeout",
                                                                 "TACONITE_NPU_TIMEOUT_MS", npu::kMaxRunTimeout.count(),
                                                                 npu::kDefaultRunTimeout.count()));
  if (const char* unit = variable("TACONITE_NINSTR_UNIT")) {
    const std::string_view text(unit);
    if (text == "words") npu.ninstr_unit = npu::NinstrUnit::Words;
    else if (text == "bytes") npu.ninstr_unit = npu::NinstrUnit::Bytes;
    else fail(ErrorKind::Input, quoted("TACONITE_NINSTR_UNIT", text) + " must be 'bytes' or 'words'");
  }
  npu.timing = timing;
  npu.driver = options.npu_driver;
  return npu;
}

// LoadOptions::precision when not Auto, else TACONITE_PRECISION's when set.
Precision resolve_precision(Precision option) {
  if (option != Precision::Auto) return option;
  const char* text = variable("TACONITE_PRECISION");
  if (text == nullptr) return Precision::Auto;
  if (const std::optional<Precision> named = precision_from_name(text)) return *named;
  fail(ErrorKind::Input, "the environment variable " + quoted("TACONITE_PRECISION", text) +
                             " is not a precision; allowed auto, f32, bf16 or int8: unset it or set one of those");
}

}  // namespace

int resolve_thread_count(int requested) {
  if (requested < 0 || requested > max_thread_count())
    fail(ErrorKind::Input, "threads " + std::to_string(requested) + " is out of range; allowed " + allowed_threads());
  if (requested > 0) return requested;
  const char* text = variable("TACONITE_THREADS");
  if (text == nullptr) return hardware_threads();
  const std::optional<std::int64_t> value = integer_in(text, 0, max_thread_count());
  if (!value)
    fail(ErrorKind::Input, "the environment variable " + quoted("TACONITE_THREADS", text) +
                               " (CPU threads per inference call) is not a thread count; allowed " + allowed_threads() +
                               ": unset it or set it in that range");
  return *value == 0 ? hardware_threads() : static_cast<int>(*value);
}

Settings resolve_settings(const LoadOptions& options) {
  Settings settings;
  settings.backend = options.backend;
  settings.threads = resolve_thread_count(options.threads);
  settings.precision = resolve_precision(options.precision);
  if (options.timing) {
    settings.timing = *options.timing;
  } else if (const char* timing = variable("TACONITE_TIMING")) {
    settings.timing = std::string_view(timing) == "1";
  }
  settings.npu = npu_settings(options, settings.timing);
  return settings;
}

}  // namespace taconite
