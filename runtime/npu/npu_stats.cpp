#include "npu/npu_stats.hpp"

#include <cstdio>

namespace taconite::npu {

std::string format_stats(const std::string& backend, const NpuStats& s) {
  char line[320];
  std::snprintf(line, sizeof line,
                "taconite %s: loads=%llu hits=%llu evictions=%llu runs=%llu load=%.3fs run=%.3fs wait=%.3fs",
                backend.c_str(), static_cast<unsigned long long>(s.loads), static_cast<unsigned long long>(s.hits),
                static_cast<unsigned long long>(s.evictions), static_cast<unsigned long long>(s.runs),
                s.load_seconds, s.run_seconds, s.wait_seconds);
  return line;
}

TimingReport::~TimingReport() {
  // A device that never loaded a context (e.g. `auto` probing a missing NPU) has nothing to report.
  if (enabled_ && (stats_.loads > 0 || stats_.runs > 0))
    std::fprintf(stderr, "%s\n", format_stats(backend_, stats_).c_str());
}

}  // namespace taconite::npu
