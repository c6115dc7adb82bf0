// When a camera outruns the analysis (drop=latest dropping frames), said once per episode: from the
// running counts of frames decoded and frames dropped, sampled about once a second, over the last
// few seconds. An episode starts when more than 10 % of the frames of a full window were dropped
// and ends when fewer than 2 % of a full window were (the gap keeps a borderline load from
// flapping). GStreamer-free: the element turns the changes into a warning and bus messages.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "camera_supervisor.hpp"  // SteadyTime, Seconds

namespace taconite::gst {

struct OverloadChange {
  bool overloaded = false;      // true: an episode began; false: it ended
  double decoded_per_s = 0.0;   // over the window
  double analysed_per_s = 0.0;  // decoded minus dropped, over the window
  Seconds lasted{0.0};          // an ended episode's length
  std::uint64_t dropped = 0;    // frames dropped during an ended episode
};

class OverloadWatch {
 public:
  explicit OverloadWatch(Seconds window = Seconds(5.0)) : window_(window) {}

  // The running totals at `now`; a change when an episode begins or ends.
  std::optional<OverloadChange> sample(SteadyTime now, std::uint64_t decoded, std::uint64_t dropped);
  // The camera was lost or restarted: the counts before do not describe the new source.
  void reset() { samples_.clear(); }
  bool overloaded() const { return episode_.has_value(); }

 private:
  struct Sample {
    SteadyTime at;
    std::uint64_t decoded, dropped;
  };
  struct Episode {
    SteadyTime since;
    std::uint64_t dropped_at_start;
  };
  Seconds window_;
  std::deque<Sample> samples_;  // oldest first, spanning at most the window (bounded by the sampling rate)
  std::optional<Episode> episode_;
};

}  // namespace taconite::gst
