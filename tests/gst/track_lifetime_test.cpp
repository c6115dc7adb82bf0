// The one track lifetime, through real elements in GstHarness: taconitetrack gives every
// confirmed track a uid (in the object_id param beside the id) and sends one "taconite-tracks-ended"
// event before the buffer of the frame where tracks are gone (lost after max-age, a scene cut, a
// frame-size change; never for an unconfirmed track, nothing at a flush); taconitepublish ends its
// tracks on that event (not on its own timeout while taconitetrack owns them), and its frame
// documents and track events carry the tracker's uid; without taconitetrack its timeout still ends them.
// taconitecamera's "taconite-camera-lost" event ends every open track (reason "camera-lost").
#include <glib/gstdio.h>
#include <gst/taconite/gsttaconitecamera.h>
#include <gst/taconite/gsttaconiteroi.h>
#include <gst/taconite/gsttaconitetracks.h>
#include <json-glib/json-glib.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gst_test_support.hpp"
#include "publish_frames.hpp"
#include "roi_track_param.hpp"

namespace {

using namespace gsttest;

constexpr const char* kCaps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";

// A black 320x240 RGB frame, with one face ROI at (120, 90) 60x60 when `face`.
GstBuffer* frame(int index, bool face, int width = 320, int height = 240) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, static_cast<gsize>(width) * height * 3, nullptr);
  gst_buffer_memset(buffer, 0, 0, gst_buffer_get_size(buffer));
  GST_BUFFER_PTS(buffer) = index * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  if (face) gst_buffer_add_video_region_of_interest_meta(buffer, "face", 120, 90, 60, 60);
  return buffer;
}

struct Seen {
  std::optional<gint64> id;
  std::string uid;  // empty: none
};

class TrackerLifetimeTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (h) gst_harness_teardown(h);
  }
  void start(const std::string& properties) {
    h = gst_harness_new_parse(("taconitetrack " + properties).c_str());
    ASSERT_NE(h, nullptr);
    gst_harness_set_src_caps_str(h, kCaps);
  }
  // Pushes frame `index` and returns what its face got (an empty Seen without a face).
  Seen push(int index, bool face, int width = 320, int height = 240) {
    GstBuffer* out = gst_harness_push_and_pull(h, frame(index, face, width, height));
    EXPECT_NE(out, nullptr);
    Seen seen;
    if (GstVideoRegionOfInterestMeta* roi = out ? gst_buffer_get_video_region_of_interest_meta_id(out, 0) : nullptr) {
      seen.id = taconite::gst::roi_track_id(roi, "object_id");
      if (const gchar* uid = gst_taconite_roi_get_track_uid(roi)) seen.uid = uid;
    }
    if (out) gst_buffer_unref(out);
    return seen;
  }
  GstHarness* h = nullptr;
};

TEST_F(TrackerLifetimeTest, EveryConfirmedTrackHasAUuidInItsObjectIdParamBesideTheId) {
  start("min-hits=2");
  EXPECT_TRUE(push(0, true).uid.empty()) << "an unconfirmed track has neither id nor uid";
  const Seen first = push(1, true);
  ASSERT_EQ(first.id, 1);
  ASSERT_EQ(first.uid.size(), 36u) << first.uid;
  EXPECT_TRUE(g_uuid_string_is_valid(first.uid.c_str())) << first.uid;
  EXPECT_EQ(first.uid[14], '4') << "a random (version 4) UUID: " << first.uid;
  for (int i = 2; i < 6; ++i) EXPECT_EQ(push(i, true).uid, first.uid) << "frame " << i << ": one uid per track";
}

TEST_F(TrackerLifetimeTest, TwoRunsGiveTheirTrackOneDifferentUids) {
  std::set<std::string> uids;
  for (int run = 0; run < 2; ++run) {
    start("min-hits=1");
    const Seen seen = push(0, true);
    ASSERT_EQ(seen.id, 1) << "ids restart at 1 in every run";
    uids.insert(seen.uid);
    gst_harness_teardown(h);
    h = nullptr;
  }
  EXPECT_EQ(uids.size(), 2u) << "the uid, not the id, tells the runs' tracks apart";
}

TEST_F(TrackerLifetimeTest, ALostTrackIsAnnouncedOnceBeforeTheBufferOfTheFrameItIsGone) {
  start("min-hits=1 max-age=5");
  const Seen seen = push(0, true);
  ASSERT_EQ(seen.id, 1);
  ended_events(h);  // stream-start, caps, segment
  for (int i = 1; i <= 5; ++i) {
    push(i, false);
    EXPECT_TRUE(ended_events(h).empty()) << "frame " << i << ": missed " << i << " <= max-age, still alive";
  }
  push(6, false);  // missed a sixth time: gone in this frame
  const std::vector<EndedEvent> ended = ended_events(h);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].reason, "lost");
  ASSERT_EQ(ended[0].tracks.size(), 1u);
  EXPECT_EQ(ended[0].tracks[0].first, 1);
  EXPECT_EQ(ended[0].tracks[0].second, seen.uid);
  for (int i = 7; i < 12; ++i) push(i, false);
  EXPECT_TRUE(ended_events(h).empty()) << "announced once";
  EXPECT_EQ(push(12, true).id, 2) << "a face after the end is a new track: ids are never reused";
}

TEST_F(TrackerLifetimeTest, TheEventPrecedesTheBufferDownstream) {
  // A pad probe downstream of the element sees the event and the buffer in their stream order.
  start("min-hits=1 max-age=0");
  std::vector<std::string> order;
  GstPad* sink = h->sinkpad;
  const gulong probe = gst_pad_add_probe(
      sink, static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM),
      [](GstPad*, GstPadProbeInfo* info, gpointer data) {
        auto* seen = static_cast<std::vector<std::string>*>(data);
        if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER)
          seen->push_back("buffer");
        else if (gst_taconite_event_is_tracks_ended(GST_PAD_PROBE_INFO_EVENT(info)))
          seen->push_back("ended");
        return GST_PAD_PROBE_OK;
      },
      &order, nullptr);
  push(0, true);
  push(1, false);
  push(2, false);
  gst_pad_remove_probe(sink, probe);
  EXPECT_EQ(order, (std::vector<std::string>{"buffer", "ended", "buffer", "buffer"}));
}

TEST_F(TrackerLifetimeTest, AnUnconfirmedTrackIsNeverAnnounced) {
  start("min-hits=3 max-age=0");
  push(0, true);
  push(1, true);  // two hits of three: never given an id
  ended_events(h);
  for (int i = 2; i < 5; ++i) push(i, false);
  EXPECT_TRUE(ended_events(h).empty());
}

TEST_F(TrackerLifetimeTest, AFrameSizeChangeEndsTheTracksAsResetAFlushAnnouncesNothing) {
  start("min-hits=1");
  const Seen seen = push(0, true);
  ASSERT_EQ(seen.id, 1);
  ended_events(h);
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=640,height=480,framerate=30/1");
  EXPECT_EQ(push(1, true, 640, 480).id, 2);
  std::vector<EndedEvent> ended = ended_events(h);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].reason, "reset");
  ASSERT_EQ(ended[0].tracks.size(), 1u);
  EXPECT_EQ(ended[0].tracks[0], (std::pair<gint64, std::string>{1, seen.uid}));

  // Every element ends every track at a flush by itself: no event names them.
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));
  for (int i = 2; i < 40; ++i) push(i, i < 4);
  ended = ended_events(h);
  ASSERT_EQ(ended.size(), 1u) << "only the track after the flush, once lost";
  EXPECT_EQ(ended[0].tracks[0].first, 3);
}

// The custom events the harness's element sent downstream since the last pull, in order: each by
// name, a tracks-ended event with its reason and tracks ("taconite-tracks-ended camera-lost 1:UID").
std::vector<std::string> custom_events(GstHarness* h) {
  std::vector<std::string> out;
  while (GstEvent* event = gst_harness_try_pull_event(h)) {
    if (GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_DOWNSTREAM) {
      std::string seen = gst_structure_get_name(gst_event_get_structure(event));
      if (gst_taconite_event_is_tracks_ended(event)) {
        seen += std::string(" ") + gst_taconite_tracks_ended_event_get_reason(event);
        for (guint i = 0; i < gst_taconite_tracks_ended_event_get_size(event); ++i) {
          gint64 id = 0;
          const gchar* uid = nullptr;
          gst_taconite_tracks_ended_event_get_track(event, i, &id, &uid);
          seen += " " + std::to_string(id) + ":" + uid;
        }
      }
      out.push_back(seen);
    }
    gst_event_unref(event);
  }
  return out;
}

TEST_F(TrackerLifetimeTest, ALostCameraEndsEveryOpenTrackAsCameraLostAndNewTracksStartAfter) {
  start("min-hits=1");
  const Seen seen = push(0, true);
  ASSERT_EQ(seen.id, 1);
  custom_events(h);
  ASSERT_TRUE(gst_harness_push_event(h, gst_taconite_camera_lost_event_new("door1", "stall")));
  // The tracks end ahead of the camera's event, which passes on for the elements after.
  EXPECT_EQ(custom_events(h), (std::vector<std::string>{std::string(GST_TACONITE_TRACKS_ENDED_EVENT_NAME) +
                                                            " camera-lost 1:" + seen.uid,
                                                        GST_TACONITE_CAMERA_LOST_EVENT_NAME}));
  ASSERT_TRUE(gst_harness_push_event(h, gst_taconite_camera_lost_event_new("door1", "stall")));
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM,
                                                             gst_structure_new_empty("not-ours"))));
  EXPECT_EQ(custom_events(h), (std::vector<std::string>{GST_TACONITE_CAMERA_LOST_EVENT_NAME, "not-ours"}))
      << "no open track: nothing ends; another custom event ends nothing";
  EXPECT_EQ(push(1, true).id, 2) << "the face when frames are back is a new track";
}

TEST(CameraLostEvent, CarriesTheStreamAndReasonAndMalformedOnesReadAsNone) {
  GstEvent* event = gst_taconite_camera_lost_event_new("door1", "eos");
  ASSERT_NE(event, nullptr);
  EXPECT_TRUE(GST_EVENT_IS_SERIALIZED(event));
  EXPECT_TRUE(gst_taconite_event_is_camera_lost(event));
  EXPECT_STREQ(gst_taconite_camera_lost_event_get_stream(event), "door1");
  EXPECT_STREQ(gst_taconite_camera_lost_event_get_reason(event), "eos");
  gst_event_unref(event);
  event = gst_taconite_camera_lost_event_new("door1", nullptr);
  EXPECT_STREQ(gst_taconite_camera_lost_event_get_reason(event), "error");
  gst_event_unref(event);
  EXPECT_EQ(gst_taconite_camera_lost_event_new(nullptr, "eos"), nullptr);
  EXPECT_EQ(gst_taconite_camera_lost_event_new("\xff", "eos"), nullptr);
  GstEvent* foreign = gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM,
                                           gst_structure_new(GST_TACONITE_CAMERA_LOST_EVENT_NAME, "stream",
                                                             G_TYPE_INT, 3, nullptr));
  EXPECT_FALSE(gst_taconite_event_is_camera_lost(foreign));
  EXPECT_EQ(gst_taconite_camera_lost_event_get_stream(foreign), nullptr);
  gst_event_unref(foreign);
  EXPECT_FALSE(gst_taconite_event_is_camera_lost(nullptr));
}

// taconitetrack ! taconitepublish messages=both into one file: frame documents and track events.
class PublishLifetimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gchar* dir = g_dir_make_tmp("taconite-lifetime-XXXXXX", nullptr);
    ASSERT_NE(dir, nullptr);
    path_ = std::string(dir) + "/out.jsonl";
    dir_ = dir;
    g_free(dir);
  }
  void TearDown() override {
    if (h_) gst_harness_teardown(h_);
    for (JsonNode* n : nodes_) json_node_unref(n);
    g_remove(path_.c_str());
    g_rmdir(dir_.c_str());
  }
  // `tracker`: taconitetrack's properties, or none for publish alone (faces then carry an id, no uid).
  void start(const std::optional<std::string>& tracker, const std::string& publish) {
    const std::string line = (tracker ? "taconitetrack " + *tracker + " ! " : std::string()) +
                             "taconitepublish messages=both stream=lobby location=" + path_ + " " + publish;
    h_ = gst_harness_new_parse(line.c_str());
    ASSERT_NE(h_, nullptr);
    gst_harness_set_src_caps_str(h_, kCaps);
    tracker_ = tracker.has_value();
  }
  void push(int index, bool face) {
    GstBuffer* in = frame(index, face);
    if (face && !tracker_) taconite::gst::set_roi_track_id(gst_buffer_get_video_region_of_interest_meta_id(in, 0), 7);
    gst_buffer_unref(gst_harness_push_and_pull(h_, in));
  }
  void finish() {
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_eos()));
    gst_harness_teardown(h_);
    h_ = nullptr;
  }
  // The file's lines of `schema`.
  std::vector<JsonObject*> lines(const char* schema) {
    std::vector<JsonObject*> out;
    for (JsonNode* node : json_line_nodes(path_)) {
      nodes_.push_back(node);
      JsonObject* o = json_node_get_object(node);
      if (std::string(json_object_get_string_member(o, "schema")) == schema) out.push_back(o);
    }
    return out;
  }
  std::vector<JsonObject*> events() { return lines("taconite-tracks/1"); }
  static std::string kind(JsonObject* o) { return json_object_get_string_member(o, "event"); }
  static gint64 pts(JsonObject* o) { return json_object_get_int_member(o, "pts_ns"); }

  GstHarness* h_ = nullptr;
  bool tracker_ = false;
  std::string dir_, path_;
  std::vector<JsonNode*> nodes_;
};

TEST_F(PublishLifetimeTest, AFaceAwayLongerThanPublishsTimeoutButWithinMaxAgeIsOneVisit) {
  // The lobby bug: publish's own timeout (5) used to end the track while taconitetrack (max-age 30)
  // kept it, and the face's return opened a second visit of the same id.
  start("min-hits=1 max-age=30", "track-timeout=5");
  int index = 0;
  for (int i = 0; i < 5; ++i) push(index++, true);
  for (int i = 0; i < 12; ++i) push(index++, false);  // away 12 frames: > track-timeout, < max-age
  for (int i = 0; i < 5; ++i) push(index++, true);
  finish();
  const std::vector<JsonObject*> all = events();
  std::map<std::string, int> kinds;
  for (JsonObject* e : all) ++kinds[kind(e)];
  EXPECT_EQ(kinds["new"], 1);
  EXPECT_EQ(kinds["end"], 1);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(std::string(json_object_get_string_member(all.back(), "reason")), "eos");
}

TEST_F(PublishLifetimeTest, TheEndComesInTheFrameTheTrackerDropsTheTrackWithItsReason) {
  // publish's fallback timeout (150) would end the track 150 frames late; taconitetrack ends it
  // after max-age=3: its end event carries the PTS of the last frame before the one it is gone in.
  start("min-hits=1 max-age=3", "track-timeout=150");
  for (int i = 0; i < 3; ++i) push(i, true);    // seen on frames 0..2
  for (int i = 3; i < 10; ++i) push(i, false);  // missed from frame 3: gone in frame 6
  const std::vector<JsonObject*> all = events();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(kind(all[1]), "end");
  EXPECT_EQ(std::string(json_object_get_string_member(all[1], "reason")), "lost");
  EXPECT_EQ(pts(all[1]), 5 * static_cast<gint64>(kFrame)) << "announced before frame 6, after frame 5";
  EXPECT_EQ(json_object_get_int_member(all[1], "last_pts_ns"), 2 * static_cast<gint64>(kFrame));
}

TEST_F(PublishLifetimeTest, TheUidIsTheSameInTheObjectIdParamTheFrameDocumentsAndTheTrackEvents) {
  start("min-hits=1 max-age=2", "");
  GstBuffer* out = gst_harness_push_and_pull(h_, frame(0, true));
  ASSERT_NE(out, nullptr);
  const gchar* param_uid = gst_taconite_roi_get_track_uid(gst_buffer_get_video_region_of_interest_meta_id(out, 0));
  ASSERT_NE(param_uid, nullptr);
  const std::string uid = param_uid;
  gst_buffer_unref(out);
  for (int i = 1; i < 3; ++i) push(i, true);
  for (int i = 3; i < 7; ++i) push(i, false);
  finish();
  const std::vector<JsonObject*> faces = lines("taconite-faces/1");
  ASSERT_EQ(faces.size(), 3u) << "one document per frame with a face";
  for (JsonObject* doc : faces) {
    JsonObject* face = json_array_get_object_element(json_object_get_array_member(doc, "faces"), 0);
    EXPECT_EQ(std::string(json_object_get_string_member(face, "track_uid")), uid);
  }
  const std::vector<JsonObject*> all = events();
  ASSERT_EQ(all.size(), 2u);
  for (JsonObject* e : all) EXPECT_EQ(std::string(json_object_get_string_member(e, "uid")), uid) << kind(e);
}

TEST_F(PublishLifetimeTest, WithoutTaconitetrackPublishsTimeoutStillEndsTheTrack) {
  start(std::nullopt, "track-timeout=5");
  for (int i = 0; i < 3; ++i) push(i, true);    // id 7, no uid
  for (int i = 3; i < 12; ++i) push(i, false);  // ended by the timeout: frame 2 + 5 + 1 = 8
  const std::vector<JsonObject*> all = events();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(kind(all[1]), "end");
  EXPECT_EQ(std::string(json_object_get_string_member(all[1], "reason")), "lost");
  EXPECT_EQ(pts(all[1]), 8 * static_cast<gint64>(kFrame));
  EXPECT_TRUE(g_uuid_string_is_valid(json_object_get_string_member(all[1], "uid"))) << "publish's own uid";
  const std::vector<JsonObject*> faces = lines("taconite-faces/1");
  ASSERT_FALSE(faces.empty());
  JsonObject* face = json_array_get_object_element(json_object_get_array_member(faces[0], "faces"), 0);
  EXPECT_TRUE(json_object_get_null_member(face, "track_uid")) << "no tracker uid on the ROI";
}

TEST_F(PublishLifetimeTest, ALostCameraEndsTheVisitWithReasonCameraLostAndTheNextIsANewTrack) {
  start("min-hits=1", "");
  for (int i = 0; i < 3; ++i) push(i, true);
  ASSERT_TRUE(gst_harness_push_event(h_, gst_taconite_camera_lost_event_new("lobby", "error")));
  for (int i = 3; i < 6; ++i) push(i, true);
  finish();
  const std::vector<JsonObject*> all = events();
  std::vector<std::string> seen;
  for (JsonObject* e : all)
    seen.push_back(kind(e) + (kind(e) == "end" ? ":" + std::string(json_object_get_string_member(e, "reason")) : ""));
  EXPECT_EQ(seen, (std::vector<std::string>{"new", "end:camera-lost", "new", "end:eos"}));
  ASSERT_EQ(all.size(), 4u);
  EXPECT_NE(std::string(json_object_get_string_member(all[0], "uid")),
            std::string(json_object_get_string_member(all[2], "uid")));
}

TEST_F(PublishLifetimeTest, WithoutTaconitetrackALostCameraEndsPublishsOwnTracks) {
  start(std::nullopt, "track-timeout=150");
  for (int i = 0; i < 3; ++i) push(i, true);  // id 7, no uid
  ASSERT_TRUE(gst_harness_push_event(h_, gst_taconite_camera_lost_event_new("lobby", "stall")));
  const std::vector<JsonObject*> all = events();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(kind(all[1]), "end");
  EXPECT_EQ(std::string(json_object_get_string_member(all[1], "reason")), "camera-lost");
}

}  // namespace
