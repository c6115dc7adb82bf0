// Counters both NPU backends keep; with TACONITE_TIMING=1 they are printed once, to stderr, when
// the device is destroyed (the only output the library ever writes), unless it never loaded a context.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace taconite::npu {

struct NpuStats {
  std::uint64_t loads = 0, hits = 0, evictions = 0, runs = 0;
  double load_seconds = 0, run_seconds = 0, wait_seconds = 0;
};

std::string format_stats(const std::string& backend, const NpuStats& stats);

// Prints the statistics at destruction when enabled. Declare it first in an owner so it is
// destroyed last, after every context has been released.
class TimingReport {
 public:
  TimingReport(std::string backend, bool enabled) : backend_(std::move(backend)), enabled_(enabled) {}
  TimingReport(const TimingReport&) = delete;
  TimingReport& operator=(const TimingReport&) = delete;
  ~TimingReport();
  NpuStats& stats() { return stats_; }
  const NpuStats& stats() const { return stats_; }

 private:
  std::string backend_;
  bool enabled_;
  NpuStats stats_;
};

// Seconds elapsed since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace taconite::npu
