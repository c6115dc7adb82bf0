#include "common/threading.hpp"

#include <algorithm>
#include <thread>

#include "taconite/model.hpp"

namespace taconite {

int hardware_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

int max_thread_count() { return std::max(hardware_threads(), kMaxThreads); }

}  // namespace taconite
