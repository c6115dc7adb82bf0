// The cpu backend's networks by batch size. A batch is rounded up to a bucket (1, 2, 4, 8, ... up
// to the largest pass) and zero-padded, so cross-stream batches of any size reuse a few networks
// instead of building one per size (building one costs about a warm batch's time). The batch-1
// network is always kept; the others are evicted least recently used.
#pragma once

#include <algorithm>
#include <cstddef>
#include <list>
#include <memory>
#include <utility>
#include <vector>

namespace taconite::cpu {

// The smallest power of two >= faces, at most max_batch (and at least 1).
inline int batch_bucket(int faces, int max_batch) {
  int bucket = 1;
  while (bucket < faces && bucket < max_batch) bucket *= 2;
  return std::min(bucket, std::max(max_batch, 1));
}

template <typename Network>
class NetworkCache {
 public:
  // `capacity`: networks kept besides the batch-1 one.
  explicit NetworkCache(std::size_t capacity) : capacity_(capacity) {}

  const Network* single() const { return single_.get(); }

  // The network for `batch`, built by build(batch) when not cached.
  template <typename Build>
  Network& get(int batch, Build&& build) {
    if (batch == 1) {
      if (!single_) single_ = build(1);
      return *single_;
    }
    auto it = std::find_if(others_.begin(), others_.end(), [&](const auto& entry) { return entry.first == batch; });
    if (it != others_.end()) {
      others_.splice(others_.begin(), others_, it);  // most recently used first
      return *others_.front().second;
    }
    std::unique_ptr<Network> built = build(batch);  // before evicting: a failed build keeps the cache
    if (others_.size() >= capacity_ && !others_.empty()) others_.pop_back();
    others_.emplace_front(batch, std::move(built));
    return *others_.front().second;
  }

  // The cached batch sizes: 1 (when built) first, then the others, most recently used first.
  std::vector<int> sizes() const {
    std::vector<int> out;
    if (single_) out.push_back(1);
    for (const auto& entry : others_) out.push_back(entry.first);
    return out;
  }

 private:
  std::size_t capacity_;
  std::unique_ptr<Network> single_;
  std::list<std::pair<int, std::unique_ptr<Network>>> others_;
};

}  // namespace taconite::cpu
