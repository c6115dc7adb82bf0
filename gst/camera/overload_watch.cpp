#include "overload_watch.hpp"

namespace taconite::gst {

namespace {

constexpr double kStartShare = 0.10;  // dropped share of a window that begins an episode
constexpr double kEndShare = 0.02;    // and that ends it
constexpr std::size_t kMaxSamples = 1024;

}  // namespace

std::optional<OverloadChange> OverloadWatch::sample(SteadyTime now, std::uint64_t decoded, std::uint64_t dropped) {
  if (!samples_.empty() && (decoded < samples_.back().decoded || dropped < samples_.back().dropped)) samples_.clear();
  samples_.push_back({now, decoded, dropped});
  // Keep the newest sample at least a window old as the window's start.
  while (samples_.size() > 2 && (now - samples_[1].at >= window_ || samples_.size() > kMaxSamples))
    samples_.pop_front();
  const Sample& first = samples_.front();
  const Seconds span = now - first.at;
  if (span < window_) return std::nullopt;  // not a full window yet
  const double decoded_in = static_cast<double>(decoded - first.decoded);
  const double dropped_in = static_cast<double>(dropped - first.dropped);
  if (decoded_in <= 0.0) return std::nullopt;  // no frames: an outage, not an overload
  const double share = dropped_in / decoded_in;
  OverloadChange change;
  change.decoded_per_s = decoded_in / span.count();
  change.analysed_per_s = (decoded_in - dropped_in) / span.count();
  if (!episode_ && share > kStartShare) {
    episode_ = Episode{now, dropped};
    change.overloaded = true;
    return change;
  }
  if (episode_ && share < kEndShare) {
    change.overloaded = false;
    change.lasted = now - episode_->since;
    change.dropped = dropped - episode_->dropped_at_start;
    episode_.reset();
    return change;
  }
  return std::nullopt;
}

}  // namespace taconite::gst
