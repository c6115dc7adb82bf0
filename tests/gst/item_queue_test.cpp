// ItemQueue on its own: gstqueue's flow states and transitions (downstream EOS, NOT_LINKED,
// errors, EOS and new streams, flushes), queries in order, limits, and leaky=skip's flags.
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>

#include "item_queue.hpp"

namespace {

using taconite::gst::EventVerdict;
using taconite::gst::FailureReport;
using taconite::gst::ItemQueue;
using taconite::gst::TakenItem;
using taconite::gst::TaskControl;

// Hang guard for calls that must return (or be released) promptly; not a timing assertion.
constexpr auto kHangGuard = std::chrono::seconds(20);

GstBuffer* buffer(int index) {
  GstBuffer* b = gst_buffer_new();
  GST_BUFFER_PTS(b) = static_cast<GstClockTime>(index);
  return b;
}

GstEvent* segment() {
  GstSegment s;
  gst_segment_init(&s, GST_FORMAT_TIME);
  return gst_event_new_segment(&s);
}

GstEvent* gap() { return gst_event_new_gap(0, GST_SECOND); }  // serialized, not sticky

class ItemQueueTest : public ::testing::Test {
 protected:
  ItemQueueTest() : queue(control()) {
    queue.set_max_queued(8);
    queue.activate();
  }

  TaskControl control() {
    TaskControl task;
    task.start = [this] {
      ++starts;
      return true;
    };
    task.pause = [this] { ++pauses; };
    return task;
  }

  // What the task takes next: "B<pts>" (with "/skip", "/reset"), an event's name, "query", or
  // "stopped". The task's objects are released here.
  std::string take() {
    const std::optional<TakenItem> taken = queue.take();
    if (!taken) return "stopped";
    std::string name;
    if (GST_IS_BUFFER(taken->object)) {
      name = "B" + std::to_string(GST_BUFFER_PTS(GST_BUFFER_CAST(taken->object)));
      if (taken->skip) name += "/skip";
    } else if (GST_IS_EVENT(taken->object)) {
      name = GST_EVENT_TYPE_NAME(GST_EVENT_CAST(taken->object));
    } else {
      return "query";  // the caller's; answered by the test
    }
    if (taken->reset) name += "/reset";
    gst_mini_object_unref(taken->object);
    return name;
  }

  std::atomic<int> starts{0};
  std::atomic<int> pauses{0};
  ItemQueue queue;
};

TEST_F(ItemQueueTest, ItemsLeaveInOrder) {
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(gap()).ret, GST_FLOW_OK);
  ASSERT_EQ(queue.push_buffer(buffer(1)), GST_FLOW_OK);
  EXPECT_EQ(take(), "B0");
  EXPECT_EQ(take(), "gap");
  EXPECT_EQ(take(), "B1");
}

TEST_F(ItemQueueTest, EachQueuedBufferKeepsItsOwnSkipFlag) {
  queue.set_leaky_skip(true);
  queue.set_max_queued(1);
  queue.set_processing(true);
  GstBuffer* twice = buffer(7);
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);  // the engine's backlog: 1 of 1
  ASSERT_EQ(queue.push_buffer(gst_buffer_ref(twice)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_buffer(twice), GST_FLOW_OK);  // the same buffer again
  EXPECT_EQ(take(), "B0");
  EXPECT_EQ(take(), "B7/skip");
  EXPECT_EQ(take(), "B7/skip") << "a buffer queued twice is skipped twice";
}

TEST_F(ItemQueueTest, OnlyBuffersArrivingWhileTheTaskProcessesAreABacklog) {
  queue.set_leaky_skip(true);
  queue.set_max_queued(2);  // upstream blocks at 8
  // The task is blocked pushing downstream (a syncing sink): waiting buffers are not a backlog.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(queue.push_buffer(buffer(i)), GST_FLOW_OK);
  queue.set_processing(true);
  for (int i = 3; i < 6; ++i) ASSERT_EQ(queue.push_buffer(buffer(i)), GST_FLOW_OK);  // B5: beyond 2
  for (const char* expected : {"B0", "B1", "B2", "B3", "B4", "B5/skip"}) EXPECT_EQ(take(), expected);
  ASSERT_EQ(queue.push_buffer(buffer(6)), GST_FLOW_OK);  // B3 and B4 were taken: room in the backlog
  EXPECT_EQ(take(), "B6");
}

TEST_F(ItemQueueTest, AFullQueueBlocksUntilTheLimitsChange) {
  queue.set_max_queued(1);
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);
  std::future<GstFlowReturn> blocked = std::async(std::launch::async, [&] { return queue.push_buffer(buffer(1)); });
  queue.set_leaky_skip(true);  // the limit becomes 4 x max-queued while the producer waits
  ASSERT_EQ(blocked.wait_for(kHangGuard), std::future_status::ready) << "leaky is re-read while waiting";
  EXPECT_EQ(blocked.get(), GST_FLOW_OK);

  queue.set_leaky_skip(false);
  blocked = std::async(std::launch::async, [&] { return queue.push_buffer(buffer(2)); });
  queue.set_max_queued(3);
  ASSERT_EQ(blocked.wait_for(kHangGuard), std::future_status::ready) << "max-queued is re-read while waiting";
  EXPECT_EQ(blocked.get(), GST_FLOW_OK);
}

TEST_F(ItemQueueTest, HugeMaxQueuedDoesNotOverflowTheLimit) {
  queue.set_leaky_skip(true);
  for (guint max_queued : {1073741824u, 2147483648u, G_MAXUINT}) {
    queue.set_max_queued(max_queued);
    EXPECT_EQ(queue.buffer_limit(), static_cast<guint64>(max_queued) * 4);
    std::future<GstFlowReturn> push = std::async(std::launch::async, [&] { return queue.push_buffer(buffer(0)); });
    ASSERT_EQ(push.wait_for(kHangGuard), std::future_status::ready) << max_queued;
    EXPECT_EQ(push.get(), GST_FLOW_OK);
    EXPECT_EQ(take(), "B0");
  }
}

TEST_F(ItemQueueTest, DownstreamEosDropsBuffersOnlyUpToTheNextSegment) {
  for (int i = 0; i < 2; ++i) ASSERT_EQ(queue.push_buffer(buffer(i)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(gap()).ret, GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(segment()).ret, GST_FLOW_OK);
  ASSERT_EQ(queue.push_buffer(buffer(2)), GST_FLOW_OK);
  EXPECT_EQ(take(), "B0");
  const FailureReport report = queue.buffer_done(GST_FLOW_EOS, false);
  EXPECT_FALSE(report.push_eos || report.post_flow_error);
  EXPECT_EQ(take(), "segment") << "B1 and the gap are dropped; the segment is still pushed";
  EXPECT_EQ(take(), "B2");
  EXPECT_EQ(queue.push_buffer(buffer(3)), GST_FLOW_OK) << "data flows on after the segment";
  EXPECT_EQ(pauses, 0) << "downstream EOS does not stop the task";
}

TEST_F(ItemQueueTest, DownstreamEosRefusesBuffersUntilANewSegment) {
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_buffer(buffer(1)), GST_FLOW_OK);
  EXPECT_EQ(take(), "B0");
  queue.buffer_done(GST_FLOW_EOS, false);
  EXPECT_EQ(queue.push_buffer(buffer(2)), GST_FLOW_EOS);
  EXPECT_EQ(queue.push_event(gap()).ret, GST_FLOW_OK) << "events are still accepted";
  EXPECT_EQ(queue.push_event(segment()).ret, GST_FLOW_OK);
  EXPECT_EQ(queue.push_buffer(buffer(3)), GST_FLOW_OK);
  for (const char* expected : {"gap", "segment", "B3"}) EXPECT_EQ(take(), expected);
  EXPECT_EQ(queue.push_buffer(buffer(4)), GST_FLOW_OK);
  queue.buffer_done(GST_FLOW_EOS, false);
  EXPECT_EQ(queue.push_event(gst_event_new_stream_start("next")).ret, GST_FLOW_OK);
  EXPECT_EQ(queue.push_buffer(buffer(5)), GST_FLOW_OK) << "a new stream lifts it too";
}

TEST_F(ItemQueueTest, EosAfterNotLinkedAsksForOneFlowError) {
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);
  EXPECT_EQ(take(), "B0");
  const FailureReport report = queue.buffer_done(GST_FLOW_NOT_LINKED, false);
  EXPECT_FALSE(report.push_eos || report.post_flow_error) << "upstream hears of it from chain";
  EXPECT_EQ(pauses, 1);
  EXPECT_EQ(queue.push_buffer(buffer(1)), GST_FLOW_NOT_LINKED);
  EXPECT_EQ(queue.push_event(gap()).ret, GST_FLOW_NOT_LINKED);
  const EventVerdict eos = queue.push_event(gst_event_new_eos());
  EXPECT_EQ(eos.ret, GST_FLOW_NOT_LINKED);
  EXPECT_TRUE(eos.post_flow_error) << "nothing follows EOS: the element must say why the stream stopped";
  EXPECT_FALSE(queue.push_event(gst_event_new_eos()).post_flow_error) << "once";
}

TEST_F(ItemQueueTest, NotLinkedKeepsTheQueueForARelink) {
  for (int i = 0; i < 2; ++i) ASSERT_EQ(queue.push_buffer(buffer(i)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(gst_event_new_tag(gst_tag_list_new_empty())).ret, GST_FLOW_OK);
  EXPECT_EQ(take(), "B0");
  queue.buffer_done(GST_FLOW_NOT_LINKED, false);
  EXPECT_EQ(queue.push_event(gst_event_new_tag(gst_tag_list_new_empty())).ret, GST_FLOW_OK)
      << "sticky events are kept for the relink";
  const int started = starts;
  queue.relink();
  EXPECT_EQ(starts, started + 1);
  for (const char* expected : {"B1", "tag", "tag"}) EXPECT_EQ(take(), expected);
  EXPECT_EQ(queue.push_buffer(buffer(2)), GST_FLOW_OK);
}

TEST_F(ItemQueueTest, AFailureWithEosQueuedIsReportedOnceByTheTask) {
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(gst_event_new_eos()).ret, GST_FLOW_OK);
  EXPECT_EQ(take(), "B0");
  FailureReport report = queue.buffer_done(GST_FLOW_NOT_NEGOTIATED, false);
  EXPECT_TRUE(report.push_eos);
  EXPECT_TRUE(report.post_flow_error) << "upstream already sent EOS and calls chain no more";
  EXPECT_FALSE(queue.push_event(gst_event_new_eos()).post_flow_error) << "already posted";

  queue.flush_stop();
  ASSERT_EQ(queue.push_buffer(buffer(1)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(gst_event_new_eos()).ret, GST_FLOW_OK);
  EXPECT_EQ(take(), "B1/reset");
  report = queue.buffer_done(GST_FLOW_ERROR, true);
  EXPECT_TRUE(report.push_eos);
  EXPECT_FALSE(report.post_flow_error) << "the element posted its own error: no second one";
  EXPECT_FALSE(queue.push_event(gst_event_new_eos()).post_flow_error);
}

TEST_F(ItemQueueTest, AnErrorDropsTheQueueAndRefusesDataUntilAFlush) {
  for (int i = 0; i < 3; ++i) ASSERT_EQ(queue.push_buffer(buffer(i)), GST_FLOW_OK);
  EXPECT_EQ(take(), "B0");
  const FailureReport report = queue.buffer_done(GST_FLOW_ERROR, true);
  EXPECT_FALSE(report.push_eos || report.post_flow_error) << "no EOS queued: upstream hears of it from chain";
  EXPECT_EQ(queue.push_buffer(buffer(3)), GST_FLOW_ERROR);
  EXPECT_EQ(queue.push_event(gst_event_new_stream_start("s")).ret, GST_FLOW_OK) << "sticky, kept";
  EXPECT_EQ(take(), "stopped");
  queue.flush_stop();
  ASSERT_EQ(queue.push_buffer(buffer(4)), GST_FLOW_OK);
  EXPECT_EQ(take(), "B4/reset") << "the flush dropped B1, B2 and the stream-start";
  ASSERT_EQ(queue.push_buffer(buffer(5)), GST_FLOW_OK);
  EXPECT_EQ(take(), "B5") << "one reset per flush";
}

TEST_F(ItemQueueTest, EosPausesTheTaskUntilANewStream) {
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(gst_event_new_eos()).ret, GST_FLOW_OK);
  EXPECT_EQ(queue.push_buffer(buffer(1)), GST_FLOW_EOS);
  EXPECT_EQ(queue.push_event(gap()).ret, GST_FLOW_EOS);
  GstQuery* query = gst_query_new_drain();
  EXPECT_FALSE(queue.push_query(query)) << "refused at once";
  gst_query_unref(query);
  EXPECT_EQ(take(), "B0");
  EXPECT_EQ(take(), "eos");
  queue.eos_pushed();
  EXPECT_EQ(pauses, 1);
  const int started = starts;
  EXPECT_EQ(queue.push_event(gst_event_new_stream_start("next")).ret, GST_FLOW_OK);
  EXPECT_EQ(starts, started + 1) << "a new stream restarts the task";
  EXPECT_EQ(queue.push_buffer(buffer(2)), GST_FLOW_OK);
  EXPECT_EQ(take(), "stream-start");
  EXPECT_EQ(take(), "B2");
}

TEST_F(ItemQueueTest, ANewStreamQueuedBehindEosKeepsTheTaskRunning) {
  ASSERT_EQ(queue.push_event(gst_event_new_eos()).ret, GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(segment()).ret, GST_FLOW_OK);
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);
  ASSERT_EQ(queue.push_event(gst_event_new_eos()).ret, GST_FLOW_OK);
  EXPECT_EQ(take(), "eos");
  queue.eos_pushed();
  EXPECT_EQ(pauses, 0);
  for (const char* expected : {"segment", "B0", "eos"}) EXPECT_EQ(take(), expected);
  queue.eos_pushed();
  EXPECT_EQ(pauses, 1);
}

TEST_F(ItemQueueTest, AQueryIsAnsweredAfterTheItemsBeforeIt) {
  ASSERT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_OK);
  GstQuery* query = gst_query_new_drain();
  std::future<bool> asked = std::async(std::launch::async, [&] { return queue.push_query(query); });
  EXPECT_EQ(take(), "B0");
  EXPECT_EQ(take(), "query");  // waits until the query is queued
  EXPECT_EQ(asked.wait_for(std::chrono::seconds(0)), std::future_status::timeout) << "not answered yet";
  queue.answer(query, true);
  ASSERT_EQ(asked.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_TRUE(asked.get());
  gst_query_unref(query);
}

TEST_F(ItemQueueTest, FlushingReleasesTheTaskAndAWaitingQuery) {
  std::future<std::string> task = std::async(std::launch::async, [&] { return take(); });
  queue.set_flushing();
  ASSERT_EQ(task.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_EQ(task.get(), "stopped");
  EXPECT_EQ(pauses, 1);
  GstQuery* query = gst_query_new_drain();
  EXPECT_FALSE(queue.push_query(query)) << "flushing: refused";
  gst_query_unref(query);
  EXPECT_EQ(queue.push_buffer(buffer(0)), GST_FLOW_FLUSHING);
}

}  // namespace
