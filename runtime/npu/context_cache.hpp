// The resident hardware-context cache shared by both NPU paths (npu-direct.md Decisions 3,
// npu-xrt.md §6): LRU keyed by the plan's context index, capacity from TACONITE_CTX_CACHE
// (default 16 = the NPU2 hardware-context cap). While full it evicts the least recently used; when
// the driver refuses a new context it evicts one more and retries until the cache is empty, then
// fails with the driver's error. Not thread-safe (one per device, one forward at a time).
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <utility>

#include "common/failure.hpp"
#include "npu/npu_stats.hpp"

namespace taconite::npu {

// Whatever a backend keeps per loaded context (hardware context, kernel, instruction buffer).
class ResidentContext {
 public:
  virtual ~ResidentContext() = default;
};

// Thrown by a loader when the driver refused to create a context (slots exhausted or similar):
// the cache may make room and retry. Any other Failure propagates unchanged.
class ContextRefused : public Failure {
 public:
  using Failure::Failure;
};

class ContextCache {
 public:
  using Loader = std::function<std::unique_ptr<ResidentContext>()>;

  ContextCache(std::size_t capacity, NpuStats& stats) : capacity_(capacity), stats_(stats) {}
  ContextCache(const ContextCache&) = delete;
  ContextCache& operator=(const ContextCache&) = delete;
  ~ContextCache() { clear(); }

  // The resident context for `key`, loading it on a miss.
  ResidentContext& acquire(int key, const Loader& load);
  // Destroys `key`'s context if resident (after a failed run that may have left it unusable).
  void evict(int key);
  // Destroys every context, least recently used first.
  void clear();

  std::size_t size() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }
  bool contains(int key) const;

 private:
  void evict_least_recent();

  std::size_t capacity_;
  NpuStats& stats_;
  std::list<std::pair<int, std::unique_ptr<ResidentContext>>> entries_;  // front = most recent
};

}  // namespace taconite::npu
