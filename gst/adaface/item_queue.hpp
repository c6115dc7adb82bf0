// The queue between taconiteadaface's sink pad and its src-pad task, with the flow states and
// transitions of GStreamer's `queue` element (gstqueue.c), kept apart from the per-buffer work.
//
// Items are buffers and serialized events (owned) and serialized queries (borrowed: their caller
// waits for the task's answer). Under one lock:
// - srcresult: the task's last fatal flow result. Anything but OK makes the sink pad refuse data
//   with it: FLUSHING while flushing or inactive, NOT_LINKED until downstream sends RECONFIGURE
//   (the queued items are kept for then), EOS once the task pushed EOS, an error until a flush.
// - eos: upstream sent EOS; data is refused until STREAM_START or SEGMENT starts a new stream.
// - unexpected: downstream answered a buffer with EOS. The items behind it are dropped up to the
//   next EOS, SEGMENT or STREAM_START (still pushed); with none queued, buffers are refused with
//   EOS until STREAM_START or SEGMENT arrives. The task keeps running.
// - error_posted: an error message for the current failure is on the bus (never post a second).
// - leaky=skip: each queued buffer carries its own skip flag, decided at arrival from the
//   processing backlog: buffers that arrived while the task was processing (not while it was
//   blocked pushing downstream) and still wait.
#pragma once

#include <gst/gst.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

namespace taconite::gst {

// With leaky=skip, upstream still blocks once this many times max-queued buffers wait: then
// downstream, not the engine, is the bottleneck, and skipping would not help.
inline constexpr guint64 kSkipQueueFactor = 4;

// How the queue starts and pauses the src-pad task. Both run with the queue's lock held, so a
// restart decided on the sink pad cannot be lost against a pause decided by the task.
struct TaskControl {
  std::function<bool()> start;  // false when the src pad is not active (nothing started)
  std::function<void()> pause;
};

// An item the task took from the queue.
struct TakenItem {
  GstMiniObject* object = nullptr;  // a buffer or event (now the task's), or a query to answer()
  bool skip = false;                // leaky=skip: pass this buffer on without embeddings
  bool reset = false;               // a flush came before this item: reset the per-stream task state
};

// The sink pad's verdict on a serialized event.
struct EventVerdict {
  GstFlowReturn ret = GST_FLOW_OK;
  bool post_flow_error = false;  // EOS arrived after the task stopped on NOT_LINKED or an error
};

// What the task must do after an item failed while upstream's EOS was already queued: upstream
// no longer calls chain, so nobody else reports the failure.
struct FailureReport {
  bool push_eos = false;         // end the stream downstream
  bool post_flow_error = false;  // and post the flow error (unless the element already posted one)
};

class ItemQueue {
 public:
  explicit ItemQueue(TaskControl task);
  ~ItemQueue();  // drops what is still queued
  ItemQueue(const ItemQueue&) = delete;
  ItemQueue& operator=(const ItemQueue&) = delete;

  // Limits; any thread. A change wakes a blocked producer (its wait re-reads them).
  void set_max_queued(guint max_queued);
  guint max_queued() const;
  void set_leaky_skip(bool skip);
  bool leaky_skip() const;
  // Buffers queued before upstream blocks: max-queued, times kSkipQueueFactor with leaky=skip.
  guint64 buffer_limit() const;

  // ---- Sink pad (the streaming thread upstream) ----
  // Queues a buffer, blocking while the queue is full; else returns why it was refused (and
  // drops it).
  GstFlowReturn push_buffer(GstBuffer* buffer);
  // Queues a serialized event (not FLUSH_START/STOP), or refuses it (dropping it).
  EventVerdict push_event(GstEvent* event);
  // Queues a serialized query and waits until the task answered it after every item queued
  // before it; false when refused, flushing, or the task stopped first.
  bool push_query(GstQuery* query);

  // ---- Control (any thread) ----
  // FLUSH_START and deactivation: refuse everything, wake every waiter.
  void set_flushing();
  // Drops every queued item (the task is stopped or paused).
  void clear();
  // FLUSH_STOP: empty, accept data again, restart the task; the task's next item says reset.
  void flush_stop();
  // Src pad activation: accept data, start the task. False when the task could not start.
  bool activate();
  // RECONFIGURE from downstream: after NOT_LINKED, try pushing again.
  void relink();
  bool flushing() const;

  // ---- The src-pad task ----
  // The next item, waiting for one; nullopt when the task must stop (it was paused).
  std::optional<TakenItem> take();
  // The task is processing a buffer (before pushing it); buffers arriving meanwhile make up the
  // backlog that leaky=skip limits.
  void set_processing(bool processing);
  // The result of a taken buffer: its push (or the element's own failure, `error_posted` when the
  // element already posted an error message). Pauses the task unless it may go on.
  FailureReport buffer_done(GstFlowReturn ret, bool error_posted);
  // After the task pushed an EOS event: pauses it unless a new stream is queued behind the EOS.
  void eos_pushed();
  // The answer to a taken query.
  void answer(GstQuery* query, bool result);

 private:
  struct Entry {
    GstMiniObject* object = nullptr;
    bool skip = false;     // leaky=skip: pass on without embeddings
    bool backlog = false;  // counted in backlog_
  };

  void clear_locked();
  void drop_until_pushable_locked();
  void pop_front_locked();

  TaskControl task_;
  mutable std::mutex lock_;
  std::condition_variable work_;  // the task waits for items
  std::condition_variable room_;  // producers wait for room, query callers for answers
  std::deque<Entry> items_;
  guint64 buffers_ = 0;  // buffers among items_
  guint max_queued_ = 1;  // the element sets its default
  bool leaky_skip_ = false;
  bool processing_ = false;
  guint64 backlog_ = 0;  // queued buffers that arrived while the task was processing
  GstFlowReturn srcresult_ = GST_FLOW_FLUSHING;
  bool eos_ = false;
  bool unexpected_ = false;
  bool error_posted_ = false;
  bool reset_pending_ = false;
  GstQuery* in_flight_ = nullptr;  // the query the task is answering outside the lock
  GstQuery* answered_ = nullptr;   // the last query the task answered ...
  bool answer_ = false;            // ... and its result
};

}  // namespace taconite::gst
