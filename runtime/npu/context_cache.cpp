#include "npu/context_cache.hpp"

#include <algorithm>
#include <chrono>

namespace taconite::npu {

ResidentContext& ContextCache::acquire(int key, const Loader& load) {
  const auto hit = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
  if (hit != entries_.end()) {
    entries_.splice(entries_.begin(), entries_, hit);
    ++stats_.hits;
    return *entries_.front().second;
  }
  while (!entries_.empty() && entries_.size() >= capacity_) evict_least_recent();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    try {
      std::unique_ptr<ResidentContext> loaded = load();
      entries_.emplace_front(key, std::move(loaded));
      break;
    } catch (const ContextRefused&) {
      if (entries_.empty()) throw;  // nothing left to make room with: the driver's error stands
      evict_least_recent();
    }
  }
  ++stats_.loads;
  stats_.load_seconds += seconds_since(start);
  return *entries_.front().second;
}

void ContextCache::evict(int key) {
  const auto found = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
  if (found == entries_.end()) return;
  entries_.erase(found);
  ++stats_.evictions;
}

void ContextCache::clear() {
  while (!entries_.empty()) entries_.pop_back();
}

bool ContextCache::contains(int key) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
}

void ContextCache::evict_least_recent() {
  entries_.pop_back();
  ++stats_.evictions;
}

}  // namespace taconite::npu
