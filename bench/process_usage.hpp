// What the benches read of their own process: CPU time of all its threads (robust against other
// load on a shared machine, unlike wall time) and peak resident memory. Header-only, shared by
// taconite-bench and real-embedder-bench.
#pragma once

#include <sys/resource.h>

namespace taconite::bench {

inline double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

inline double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace taconite::bench
