// A load's configuration, resolved once: the LoadOptions fields, and for each unset one its
// environment default. This is the only place the runtime reads environment variables; every value
// is range-checked here, so a backend never sees a malformed one.
#pragma once

#include <string>

#include "npu/npu_settings.hpp"
#include "taconite/model.hpp"

namespace taconite {

struct Settings {
  std::string backend;
  int threads = 1;  // 1..max_thread_count()
  Precision precision = Precision::Auto;
  bool timing = false;
  npu::NpuSettings npu;
};

// Throws Failure(Input) naming the option or variable, its value and the allowed range.
Settings resolve_settings(const LoadOptions& options);

// Resolves a LoadOptions::threads value (0 = TACONITE_THREADS, else all cores) to a thread count
// in 1..max_thread_count(). Throws Failure(Input) naming the value and the allowed range for a
// negative or too large request and for a TACONITE_THREADS that is not such a count.
int resolve_thread_count(int requested);

}  // namespace taconite
