// Per-thread scratch buffers made BEFORE an OpenMP parallel region: an allocation failure (or any
// exception) inside a region would terminate the process instead of reaching the API's wall.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace taconite {

template <typename T>
class PerThreadScratch {
 public:
  PerThreadScratch(int threads, std::size_t elements)
      : elements_(elements), data_(static_cast<std::size_t>(std::max(threads, 1)) * elements) {}

  // The calling thread's buffer; call inside a region started with num_threads(<= threads).
  std::span<T> mine() {
#ifdef _OPENMP
    const std::size_t index = static_cast<std::size_t>(omp_get_thread_num());
#else
    const std::size_t index = 0;
#endif
    return {data_.data() + index * elements_, elements_};
  }

 private:
  std::size_t elements_;
  std::vector<T> data_;
};

}  // namespace taconite
