// oneDNN (built with OpenMP) runs each primitive with omp_get_max_threads() threads of the
// calling thread. This guard sets that to the runtime's thread count for one call and restores
// the caller's value afterwards, so an application's own OpenMP setting is left as it was.
#pragma once

#include <omp.h>

namespace taconite::cpu {

class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads) : previous_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ScopedOmpThreads() { omp_set_num_threads(previous_); }
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace taconite::cpu
