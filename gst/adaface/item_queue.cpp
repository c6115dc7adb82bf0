#include "item_queue.hpp"

#include <utility>

namespace taconite::gst {

namespace {

// Events a stream can go on from after EOS: a new stream or a new segment.
bool starts_stream(GstEventType type) { return type == GST_EVENT_STREAM_START || type == GST_EVENT_SEGMENT; }

// Fatal results that upstream must hear of (as GstBaseSrc and queue treat them).
bool fatal(GstFlowReturn ret) { return ret == GST_FLOW_NOT_LINKED || ret < GST_FLOW_EOS; }

}  // namespace

ItemQueue::ItemQueue(TaskControl task) : task_(std::move(task)) {}

ItemQueue::~ItemQueue() {
  std::lock_guard<std::mutex> guard(lock_);
  clear_locked();
}

void ItemQueue::set_max_queued(guint max_queued) {
  std::lock_guard<std::mutex> guard(lock_);
  max_queued_ = max_queued;
  room_.notify_all();
}

guint ItemQueue::max_queued() const {
  std::lock_guard<std::mutex> guard(lock_);
  return max_queued_;
}

void ItemQueue::set_leaky_skip(bool skip) {
  std::lock_guard<std::mutex> guard(lock_);
  leaky_skip_ = skip;
  room_.notify_all();
}

bool ItemQueue::leaky_skip() const {
  std::lock_guard<std::mutex> guard(lock_);
  return leaky_skip_;
}

guint64 ItemQueue::buffer_limit() const {
  std::lock_guard<std::mutex> guard(lock_);
  return static_cast<guint64>(max_queued_) * (leaky_skip_ ? kSkipQueueFactor : 1);  // 64-bit: no overflow
}

GstFlowReturn ItemQueue::push_buffer(GstBuffer* buffer) {
  std::unique_lock<std::mutex> guard(lock_);
  // The limits are re-read on every wake-up: a larger max-queued or leaky=skip frees a waiter.
  room_.wait(guard, [&] {
    const guint64 limit = static_cast<guint64>(max_queued_) * (leaky_skip_ ? kSkipQueueFactor : 1);
    return srcresult_ != GST_FLOW_OK || eos_ || unexpected_ || buffers_ < limit;
  });
  GstFlowReturn ret = srcresult_;
  if (ret == GST_FLOW_OK && (eos_ || unexpected_)) ret = GST_FLOW_EOS;
  if (ret != GST_FLOW_OK) {
    guard.unlock();
    gst_buffer_unref(buffer);
    return ret;
  }
  Entry entry;
  entry.object = GST_MINI_OBJECT_CAST(buffer);
  // leaky=skip: only buffers that wait because the task is busy processing count as the engine
  // falling behind; buffers waiting while it is blocked in a downstream push (a syncing sink) do not.
  if (leaky_skip_ && processing_) {
    if (backlog_ >= max_queued_) {
      entry.skip = true;
    } else {
      entry.backlog = true;
      ++backlog_;
    }
  }
  items_.push_back(entry);
  ++buffers_;
  work_.notify_one();
  return GST_FLOW_OK;
}

EventVerdict ItemQueue::push_event(GstEvent* event) {
  const GstEventType type = GST_EVENT_TYPE(event);
  EventVerdict verdict;
  std::unique_lock<std::mutex> guard(lock_);
  // A new stream or segment lifts the EOS that went out.
  if (srcresult_ == GST_FLOW_EOS && starts_stream(type)) srcresult_ = GST_FLOW_OK;
  if (srcresult_ != GST_FLOW_OK) {
    // Sticky events are kept for when data flows again (after a relink), except EOS: nothing
    // follows it, so a fatal result must be reported now or the pipeline waits forever.
    if (!GST_EVENT_IS_STICKY(event) || type == GST_EVENT_EOS) {
      verdict.ret = srcresult_;
      verdict.post_flow_error = type == GST_EVENT_EOS && fatal(srcresult_) && !error_posted_;
      error_posted_ = error_posted_ || verdict.post_flow_error;
      guard.unlock();
      gst_event_unref(event);
      return verdict;
    }
  }
  if (eos_) {
    if (!starts_stream(type)) {
      verdict.ret = GST_FLOW_EOS;
      guard.unlock();
      gst_event_unref(event);
      return verdict;
    }
    // A new stream after EOS: accept data again. An error or NOT_LINKED still stands.
    eos_ = false;
    unexpected_ = false;
    if (srcresult_ == GST_FLOW_OK) task_.start();
  }
  if (starts_stream(type)) unexpected_ = false;
  if (type == GST_EVENT_EOS) eos_ = true;
  Entry entry;
  entry.object = GST_MINI_OBJECT_CAST(event);
  items_.push_back(entry);
  work_.notify_one();
  return verdict;
}

bool ItemQueue::push_query(GstQuery* query) {
  std::unique_lock<std::mutex> guard(lock_);
  if (srcresult_ != GST_FLOW_OK || eos_) return false;
  Entry entry;
  entry.object = GST_MINI_OBJECT_CAST(query);
  items_.push_back(entry);
  work_.notify_one();
  room_.wait(guard, [&] { return answered_ == query || (srcresult_ != GST_FLOW_OK && in_flight_ != query); });
  if (answered_ == query) {
    answered_ = nullptr;
    return answer_;
  }
  // Flushing or stopped before the task took it: take it back out (it is the caller's).
  for (auto it = items_.begin(); it != items_.end(); ++it)
    if (it->object == GST_MINI_OBJECT_CAST(query)) {
      items_.erase(it);
      break;
    }
  return false;
}

void ItemQueue::set_flushing() {
  std::lock_guard<std::mutex> guard(lock_);
  srcresult_ = GST_FLOW_FLUSHING;
  work_.notify_all();
  room_.notify_all();
}

void ItemQueue::clear() {
  std::lock_guard<std::mutex> guard(lock_);
  clear_locked();
}

void ItemQueue::flush_stop() {
  std::lock_guard<std::mutex> guard(lock_);
  clear_locked();
  srcresult_ = GST_FLOW_OK;
  eos_ = false;
  unexpected_ = false;
  error_posted_ = false;
  reset_pending_ = true;
  task_.start();
}

bool ItemQueue::activate() {
  std::lock_guard<std::mutex> guard(lock_);
  srcresult_ = GST_FLOW_OK;
  eos_ = false;
  unexpected_ = false;
  error_posted_ = false;
  return task_.start();
}

void ItemQueue::relink() {
  std::lock_guard<std::mutex> guard(lock_);
  if (srcresult_ != GST_FLOW_NOT_LINKED) return;
  srcresult_ = GST_FLOW_OK;
  error_posted_ = false;
  task_.start();
}

bool ItemQueue::flushing() const {
  std::lock_guard<std::mutex> guard(lock_);
  return srcresult_ == GST_FLOW_FLUSHING;
}

std::optional<TakenItem> ItemQueue::take() {
  std::unique_lock<std::mutex> guard(lock_);
  work_.wait(guard, [&] { return srcresult_ != GST_FLOW_OK || !items_.empty(); });
  if (srcresult_ != GST_FLOW_OK) {
    task_.pause();
    return std::nullopt;
  }
  const Entry entry = items_.front();
  TakenItem taken;
  taken.object = entry.object;
  taken.skip = entry.skip;
  taken.reset = std::exchange(reset_pending_, false);
  if (GST_IS_QUERY(entry.object)) in_flight_ = GST_QUERY_CAST(entry.object);
  pop_front_locked();
  return taken;
}

void ItemQueue::set_processing(bool processing) {
  std::lock_guard<std::mutex> guard(lock_);
  processing_ = processing;
}

FailureReport ItemQueue::buffer_done(GstFlowReturn ret, bool error_posted) {
  FailureReport report;
  if (ret == GST_FLOW_OK) return report;
  std::lock_guard<std::mutex> guard(lock_);
  if (srcresult_ != GST_FLOW_OK) {
    // A flush or deactivation raced with the push; FLUSH_STOP or activation restarts the task.
    task_.pause();
    return report;
  }
  if (ret == GST_FLOW_EOS) {
    // Downstream is EOS: the task goes on, pushing only what can start a stream again.
    drop_until_pushable_locked();
    return report;
  }
  srcresult_ = ret;
  // After NOT_LINKED the queue is kept for a relink (RECONFIGURE restarts the task).
  if (ret != GST_FLOW_NOT_LINKED) clear_locked();
  room_.notify_all();
  task_.pause();
  if (eos_ && fatal(ret)) {
    report.push_eos = true;
    report.post_flow_error = !error_posted;
  }
  error_posted_ = error_posted || report.post_flow_error;
  return report;
}

void ItemQueue::eos_pushed() {
  std::lock_guard<std::mutex> guard(lock_);
  // Anything queued behind an EOS came after a STREAM_START or SEGMENT that lifted it: go on.
  if (srcresult_ == GST_FLOW_OK && !items_.empty()) return;
  if (srcresult_ == GST_FLOW_OK) srcresult_ = GST_FLOW_EOS;
  room_.notify_all();
  task_.pause();
}

void ItemQueue::answer(GstQuery* query, bool result) {
  std::lock_guard<std::mutex> guard(lock_);
  in_flight_ = nullptr;
  answered_ = query;
  answer_ = result;
  room_.notify_all();
}

void ItemQueue::pop_front_locked() {
  const Entry& entry = items_.front();
  if (GST_IS_BUFFER(entry.object)) {
    --buffers_;
    if (entry.backlog) --backlog_;
  }
  items_.pop_front();
  room_.notify_all();
}

void ItemQueue::clear_locked() {
  while (!items_.empty()) {
    GstMiniObject* object = items_.front().object;
    pop_front_locked();
    if (!GST_IS_QUERY(object)) gst_mini_object_unref(object);  // a query's caller sees srcresult and gives up
  }
}

void ItemQueue::drop_until_pushable_locked() {
  while (!items_.empty()) {
    GstMiniObject* object = items_.front().object;
    if (GST_IS_EVENT(object)) {
      const GstEventType type = GST_EVENT_TYPE(object);
      if (type == GST_EVENT_EOS || starts_stream(type)) return;  // the task pushes it next
    }
    pop_front_locked();
    if (GST_IS_QUERY(object)) {
      answered_ = GST_QUERY_CAST(object);  // refused: downstream is EOS
      answer_ = false;
    } else {
      gst_mini_object_unref(object);
    }
  }
  unexpected_ = true;  // nothing pushable queued: refuse buffers until a new segment
}

}  // namespace taconite::gst
