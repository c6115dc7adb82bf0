// The time a gallery stamps on what it stores (created_unix): Unix seconds, this machine's clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace taconite::gallery {

inline std::int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace taconite::gallery
