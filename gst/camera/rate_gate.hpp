// taconitecamera's max-rate: lets at most `rate` frames a second through, as Frigate's detect fps or
// DeepStream's drop-frame-interval do, so a camera's analysis costs what its rate needs whatever
// the camera sends. Each frame let through moves the next due time on by one period from the last
// due time (not from the frame's own time), so a 25 frames/s camera capped at 7 gets 7 a second,
// not 25 / 4; a frame up to a tenth of a period early still passes (a live camera's arrival times
// jitter), and after a pause or times going backwards the schedule starts again from the next
// frame. GStreamer-free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

namespace taconite::gst {

class RateGate {
 public:
  // `rate` frames a second; 0 (or less, or NaN) lets every frame through. A period is at most an
  // hour, so a tiny rate cannot overflow the times.
  explicit RateGate(double rate = 0.0)
      : period_ns_(rate > 0.0 ? static_cast<std::int64_t>(std::min(1e9 / rate, 3.6e12)) : 0) {}

  // A frame at `time_ns` (arrival or presentation time, rising): true to let it through.
  bool admit(std::int64_t time_ns) {
    if (period_ns_ <= 0) return true;
    // Rising times stay within 1.1 periods before the due time; further back they went backwards
    // (a source that started its times again): the schedule starts again.
    if (due_ns_ && time_ns < *due_ns_ - 2 * period_ns_) due_ns_.reset();
    if (due_ns_ && time_ns < *due_ns_ - period_ns_ / 10) return false;
    // On schedule: one period after the last due time; behind it by a period or more (a pause, the
    // first frame): one period after this frame.
    due_ns_ = due_ns_ && time_ns - *due_ns_ < period_ns_ ? *due_ns_ + period_ns_ : time_ns + period_ns_;
    return true;
  }

  // A new source: its times do not continue the old one's.
  void reset() { due_ns_.reset(); }

 private:
  std::int64_t period_ns_;
  std::optional<std::int64_t> due_ns_;  // the earliest time the next frame is let through
};

}  // namespace taconite::gst
