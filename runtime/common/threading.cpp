#include "common/threading.hpp"

#include <cstdlib>
#include <string>
#include <thread>

namespace taconite {

int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
  if (const char* env = std::getenv("TACONITE_THREADS")) {
    try {
      const int value = std::stoi(env);
      if (value > 0) return value;
    } catch (...) {  // an unparsable value falls back to all cores
    }
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

}  // namespace taconite
