// gsttaconitemeta-1.0's tracks-ended event (gst/taconite/gsttaconitetracks.h): what it carries, that it
// stays in order with buffers through a queue, and that malformed or foreign events read as none.
#include <gst/check/gstharness.h>
#include <gst/taconite/gsttaconitetracks.h>

#include <string>
#include <vector>

#include "gst_test_support.hpp"

namespace {

TEST(TracksEndedEvent, CarriesEachTracksIdAndUidAndTheReason) {
  const gint64 ids[] = {3, G_GINT64_CONSTANT(5000000000)};
  const gchar* uids[] = {"7f0c1d2e-aaaa-4bbb-8ccc-123456789abc", nullptr};
  GstEvent* event = gst_taconite_tracks_ended_event_new(ids, uids, 2, "scene-cut");
  ASSERT_NE(event, nullptr);
  EXPECT_TRUE(GST_EVENT_IS_SERIALIZED(event));
  EXPECT_TRUE(GST_EVENT_IS_DOWNSTREAM(event));
  EXPECT_TRUE(gst_taconite_event_is_tracks_ended(event));
  ASSERT_EQ(gst_taconite_tracks_ended_event_get_size(event), 2u);
  gint64 id = 0;
  const gchar* uid = nullptr;
  ASSERT_TRUE(gst_taconite_tracks_ended_event_get_track(event, 0, &id, &uid));
  EXPECT_EQ(id, 3);
  EXPECT_STREQ(uid, uids[0]);
  ASSERT_TRUE(gst_taconite_tracks_ended_event_get_track(event, 1, &id, &uid));
  EXPECT_EQ(id, G_GINT64_CONSTANT(5000000000));
  EXPECT_STREQ(uid, "");
  EXPECT_FALSE(gst_taconite_tracks_ended_event_get_track(event, 2, &id, &uid));
  EXPECT_TRUE(gst_taconite_tracks_ended_event_get_track(event, 1, nullptr, nullptr));
  EXPECT_STREQ(gst_taconite_tracks_ended_event_get_reason(event), "scene-cut");
  gst_event_unref(event);

  event = gst_taconite_tracks_ended_event_new(ids, nullptr, 1, nullptr);
  ASSERT_NE(event, nullptr);
  EXPECT_STREQ(gst_taconite_tracks_ended_event_get_reason(event), "lost");
  gst_event_unref(event);
}

TEST(TracksEndedEvent, RefusesToMakeAnEventOutOfBadArguments) {
  const gint64 ids[] = {1};
  const gchar* bad_utf8[] = {"\xff\xfe"};
  EXPECT_EQ(gst_taconite_tracks_ended_event_new(nullptr, nullptr, 1, nullptr), nullptr);
  EXPECT_EQ(gst_taconite_tracks_ended_event_new(ids, nullptr, 0, nullptr), nullptr);
  EXPECT_EQ(gst_taconite_tracks_ended_event_new(ids, nullptr, GST_TACONITE_TRACKS_ENDED_MAX + 1, nullptr), nullptr);
  EXPECT_EQ(gst_taconite_tracks_ended_event_new(ids, bad_utf8, 1, nullptr), nullptr);
  EXPECT_EQ(gst_taconite_tracks_ended_event_new(ids, nullptr, 1, "\xff"), nullptr);
}

// A hand-made event of the right name whose fields are wrong in one way each.
GstEvent* event_with(GstStructure* s) { return gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM, s); }

GValue int_array(std::vector<gint> values) {
  GValue out = G_VALUE_INIT;
  gst_value_array_init(&out, values.size());
  for (gint v : values) {
    GValue e = G_VALUE_INIT;
    g_value_init(&e, G_TYPE_INT);
    g_value_set_int(&e, v);
    gst_value_array_append_and_take_value(&out, &e);
  }
  return out;
}

TEST(TracksEndedEvent, MalformedOrForeignEventsReadAsNoTracks) {
  std::vector<GstEvent*> events;
  events.push_back(nullptr);
  events.push_back(gst_event_new_eos());
  events.push_back(event_with(gst_structure_new_empty("some-other-event")));
  events.push_back(event_with(gst_structure_new_empty(GST_TACONITE_TRACKS_ENDED_EVENT_NAME)));
  {  // ids of the wrong integer type
    GstStructure* s = gst_structure_new_empty(GST_TACONITE_TRACKS_ENDED_EVENT_NAME);
    GValue ids = int_array({1, 2}), uids = int_array({1, 2});
    gst_structure_take_value(s, "ids", &ids);
    gst_structure_take_value(s, "uids", &uids);
    events.push_back(event_with(s));
  }
  {  // the right ids, no uids of the same length
    const gint64 ids[] = {1, 2};
    GstEvent* good = gst_taconite_tracks_ended_event_new(ids, nullptr, 2, nullptr);
    GstStructure* s = gst_structure_copy(gst_event_get_structure(good));
    gst_event_unref(good);
    GValue uids = G_VALUE_INIT;
    gst_value_array_init(&uids, 1);
    GValue one = G_VALUE_INIT;
    g_value_init(&one, G_TYPE_STRING);
    g_value_set_string(&one, "x");
    gst_value_array_append_and_take_value(&uids, &one);
    gst_structure_take_value(s, "uids", &uids);
    events.push_back(event_with(s));
  }
  {  // the right structure as an upstream event
    const gint64 ids[] = {1};
    GstEvent* good = gst_taconite_tracks_ended_event_new(ids, nullptr, 1, nullptr);
    events.push_back(gst_event_new_custom(GST_EVENT_CUSTOM_UPSTREAM, gst_structure_copy(gst_event_get_structure(good))));
    gst_event_unref(good);
  }
  for (GstEvent* event : events) {
    EXPECT_FALSE(gst_taconite_event_is_tracks_ended(event));
    EXPECT_EQ(gst_taconite_tracks_ended_event_get_size(event), 0u);
    EXPECT_FALSE(gst_taconite_tracks_ended_event_get_track(event, 0, nullptr, nullptr));
    EXPECT_EQ(gst_taconite_tracks_ended_event_get_reason(event), nullptr);
    if (event) gst_event_unref(event);
  }
}

// Through a real queue (its own streaming thread) the event arrives between the buffers it was sent between.
TEST(TracksEndedEvent, StaysInOrderWithTheBuffersThroughAQueue) {
  GstHarness* h = gst_harness_new_parse("queue");
  std::vector<std::string> arrived;  // written by the queue's thread, read after it is drained
  gst_pad_add_probe(
      h->sinkpad, static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM),
      [](GstPad*, GstPadProbeInfo* info, gpointer order) {
        auto* seen = static_cast<std::vector<std::string>*>(order);
        if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER)
          seen->push_back("buffer");
        else if (gst_taconite_event_is_tracks_ended(GST_PAD_PROBE_INFO_EVENT(info)))
          seen->push_back("ended");
        return GST_PAD_PROBE_OK;
      },
      &arrived, nullptr);
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=8,height=8,framerate=25/1");
  ASSERT_EQ(gst_harness_push(h, gst_buffer_new_allocate(nullptr, 192, nullptr)), GST_FLOW_OK);
  const gint64 ids[] = {9};
  ASSERT_TRUE(gst_harness_push_event(h, gst_taconite_tracks_ended_event_new(ids, nullptr, 1, "lost")));
  ASSERT_EQ(gst_harness_push(h, gst_buffer_new_allocate(nullptr, 192, nullptr)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  gst_buffer_unref(gst_harness_pull(h));

  EXPECT_EQ(arrived, (std::vector<std::string>{"buffer", "ended", "buffer"}));
  GstEvent* ended = nullptr;
  while (GstEvent* e = gst_harness_try_pull_event(h)) {
    if (!ended && gst_taconite_event_is_tracks_ended(e))
      ended = e;
    else
      gst_event_unref(e);
  }
  ASSERT_NE(ended, nullptr);
  gint64 id = 0;
  ASSERT_TRUE(gst_taconite_tracks_ended_event_get_track(ended, 0, &id, nullptr));
  EXPECT_EQ(id, 9);
  gst_event_unref(ended);
  gst_harness_teardown(h);
}

}  // namespace
