// Between taconitecamera's decoder (the producer, on the source's streaming thread) and its src pad
// task (the consumer): frames, events and the end of the stream, in order, bounded.
//
// keep_latest (drop=latest): a frame that arrives while the previous one still waits replaces it
// (counted as dropped), so the consumer always takes the newest frame and the producer never waits.
// Otherwise (drop=none) the producer waits after queuing a frame until the consumer took it, or
// until flushing or retire_before() lets it go (a source being torn down must not block).
// Events are never replaced; at most `max_items` wait in all (beyond, the oldest frame goes, or
// the oldest item when no frame waits). Frames are taken only while open (a live source's
// frames flow in PLAYING only); an event or the end behind them waits too, keeping the order.
// GStreamer-free: a template over the frame and event types (default-constructible, movable),
// tested on its own.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

namespace taconite::gst {

template <typename Frame, typename Event>
class OutputMailbox {
 public:
  struct Item {
    enum class Kind { FrameItem, EventItem, End } kind = Kind::End;
    Frame frame;  // Kind::FrameItem
    Event event;  // Kind::EventItem
  };

  explicit OutputMailbox(bool keep_latest, std::size_t max_items = 64)
      : keep_latest_(keep_latest), max_items_(max_items < 2 ? 2 : max_items) {}

  // Queues a frame of producer `generation` (see above). `waiting(true)` is called before the
  // producer starts waiting for the consumer and `waiting(false)` after it stopped. Returns false
  // when the frame was refused (flushing, a retired generation) or discarded by a flush, or the
  // wait was cut short (retired); true once it was taken (or dropped at the bound).
  bool push_frame(Frame frame, std::uint64_t generation, const std::function<void(bool)>& waiting = {}) {
    std::unique_lock<std::mutex> guard(lock_);
    if (flushing_ || ended_ || generation < first_generation_) return false;
    if (keep_latest_ && !items_.empty() && is_frame(items_.back())) {
      items_.back().frame = std::move(frame);
      ++dropped_;
      return true;
    }
    Item item;
    item.kind = Item::Kind::FrameItem;
    item.frame = std::move(frame);
    append_locked(std::move(item));
    changed_.notify_all();
    if (keep_latest_) return true;
    const std::uint64_t mine = ++frames_in_;
    const std::uint64_t flushes = flushes_;
    auto done = [&] { return frames_out_ >= mine || flushing_ || generation < first_generation_; };
    if (done()) return true;
    if (waiting) waiting(true);
    changed_.wait(guard, done);
    if (waiting) waiting(false);
    return frames_out_ >= mine && flushes_ == flushes;
  }

  void push_event(Event event) {
    std::lock_guard<std::mutex> guard(lock_);
    if (flushing_ || ended_) return;
    Item item;
    item.kind = Item::Kind::EventItem;
    item.event = std::move(event);
    append_locked(std::move(item));
    changed_.notify_all();
  }

  // The end of the stream: after it, nothing more is queued (frames and events are refused).
  void push_end() {
    std::lock_guard<std::mutex> guard(lock_);
    if (flushing_ || ended_) return;
    append_locked(Item{});
    ended_ = true;
    changed_.notify_all();
  }

  // The next item; waits for one. Empty when flushing.
  std::optional<Item> take() {
    std::unique_lock<std::mutex> guard(lock_);
    changed_.wait(guard, [&] { return flushing_ || (!items_.empty() && (open_ || !is_frame(items_.front()))); });
    if (flushing_) return std::nullopt;
    Item item = std::move(items_.front());
    items_.pop_front();
    if (is_frame(item)) ++frames_out_;
    changed_.notify_all();
    return item;
  }

  // Frames may be taken (true) or wait (false) with what queues behind them.
  void set_open(bool open) {
    std::lock_guard<std::mutex> guard(lock_);
    open_ = open;
    changed_.notify_all();
  }

  // Flushing: take() returns empty, waiting producers return, pushes are refused and what waited
  // is discarded. A new mailbox is not flushing.
  void set_flushing(bool flushing) {
    std::lock_guard<std::mutex> guard(lock_);
    flushing_ = flushing;
    if (flushing) {
      items_.clear();
      frames_out_ = frames_in_;  // nothing is waited for any more
      ++flushes_;
      ended_ = false;
    }
    changed_.notify_all();
  }

  // Producers of a generation before `generation` (a source being stopped) wait no more, now or
  // later, and their further frames are refused; what they queued stays.
  void retire_before(std::uint64_t generation) {
    std::lock_guard<std::mutex> guard(lock_);
    if (generation > first_generation_) first_generation_ = generation;
    changed_.notify_all();
  }

  std::uint64_t dropped() const {
    std::lock_guard<std::mutex> guard(lock_);
    return dropped_;
  }

 private:
  static bool is_frame(const Item& item) { return item.kind == Item::Kind::FrameItem; }

  // Appends, first making room: the oldest frame goes (counted), else the oldest item.
  void append_locked(Item item) {
    if (items_.size() >= max_items_) {
      auto oldest = items_.begin();
      while (oldest != items_.end() && !is_frame(*oldest)) ++oldest;
      if (oldest == items_.end()) oldest = items_.begin();
      if (is_frame(*oldest)) {
        ++dropped_;
        ++frames_out_;  // a producer waiting for it is done waiting
      }
      items_.erase(oldest);
    }
    items_.push_back(std::move(item));
  }

  const bool keep_latest_;
  const std::size_t max_items_;
  mutable std::mutex lock_;
  std::condition_variable changed_;
  std::deque<Item> items_;
  bool open_ = true;
  bool flushing_ = false;
  bool ended_ = false;  // the end was queued
  std::uint64_t frames_in_ = 0, frames_out_ = 0;  // drop=none: queued and taken (or dropped) so far
  std::uint64_t flushes_ = 0;
  std::uint64_t first_generation_ = 0;  // producers before it are retired
  std::uint64_t dropped_ = 0;
};

}  // namespace taconite::gst
