#include "npu/npu_settings.hpp"

namespace taconite::npu {

std::uint32_t ninstr_value(std::size_t bytes, NinstrUnit unit) {
  return static_cast<std::uint32_t>(unit == NinstrUnit::Words ? bytes / 4 : bytes);
}

}  // namespace taconite::npu
