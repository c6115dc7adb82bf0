// taconitetrack on the real Hamilton clip (../shared/realfaces/video/short_hamilton_clip.mp4,
// 640x360, 275 frames): its three hard cuts (found by looking at the frames: a wide stage shot to a
// close-up at frame 20, the close-up to Lin-Manuel Miranda singing at 82, Lin to the audience with
// the Obamas at 211) end the tracks there and nowhere else, and with the recommended detector
// (taconitedetect YuNet, interval=3) no track id is seen on both sides of a cut.
// Exits 77 (skipped), saying why, without the clip or the YuNet model.
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gsttaconitedetect.h"
#include "gsttaconitetrack.h"
#include "roi_track_param.hpp"

namespace {

namespace fs = std::filesystem;

// The first frame of each new shot.
const std::vector<int> kCuts = {20, 82, 211};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}
std::string clip() { return env("TACONITE_REALFACES_DIR") + "/video/short_hamilton_clip.mp4"; }
std::string yunet_model() { return env("TACONITE_YUNET_MODEL"); }

// The track ids of each frame's face ROIs, in frame order, from `launch` (ending in an appsink
// named sink). `probe`, when given, runs on every buffer entering the element named `track`.
std::vector<std::vector<gint64>> ids_per_frame(const std::string& launch, GstPadProbeCallback probe = nullptr) {
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(launch.c_str(), &error);
  EXPECT_NE(pipeline, nullptr) << (error ? error->message : "");
  g_clear_error(&error);
  if (!pipeline) return {};
  if (probe) {
    GstElement* track = gst_bin_get_by_name(GST_BIN(pipeline), "track");
    GstPad* sink = gst_element_get_static_pad(track, "sink");
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, probe, nullptr, nullptr);
    gst_object_unref(sink);
    gst_object_unref(track);
  }
  GstElement* appsink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  EXPECT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  std::vector<std::vector<gint64>> frames;
  GstSample* sample = nullptr;
  g_signal_emit_by_name(appsink, "pull-sample", &sample);
  for (; sample; g_signal_emit_by_name(appsink, "pull-sample", &sample)) {
    std::vector<gint64>& ids = frames.emplace_back();
    gpointer state = nullptr;
    while (GstMeta* m = gst_buffer_iterate_meta_filtered(gst_sample_get_buffer(sample), &state,
                                                         GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
      if (const std::optional<gint64> id =
              taconite::gst::roi_track_id(reinterpret_cast<GstVideoRegionOfInterestMeta*>(m), "object_id"))
        ids.push_back(*id);
    gst_sample_unref(sample);
  }
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* failure = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  EXPECT_EQ(failure, nullptr) << "the pipeline failed";
  if (failure) gst_message_unref(failure);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(appsink);
  gst_object_unref(pipeline);
  return frames;
}

// The same box on every frame: only a cut can end its track.
GstPadProbeReturn add_fixed_face(GstPad*, GstPadProbeInfo* info, gpointer) {
  GstBuffer* buffer = gst_buffer_make_writable(GST_PAD_PROBE_INFO_BUFFER(info));
  GST_PAD_PROBE_INFO_DATA(info) = buffer;
  gst_buffer_add_video_region_of_interest_meta(buffer, "face", 280, 140, 80, 80);
  return GST_PAD_PROBE_OK;
}

std::string decoded_clip() {
  return "filesrc location=\"" + clip() + "\" ! decodebin ! videoconvert ! ";
}

TEST(SceneCutClip, TracksEndAtTheClipsThreeCutsAndNowhereElse) {
  const auto frames = ids_per_frame(
      decoded_clip() + "taconitetrack name=track min-hits=1 ! appsink name=sink sync=false", add_fixed_face);
  ASSERT_EQ(frames.size(), 275u);
  std::vector<int> id_changes;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    ASSERT_EQ(frames[i].size(), 1u) << "frame " << i;
    if (i > 0 && frames[i][0] != frames[i - 1][0]) id_changes.push_back(static_cast<int>(i));
  }
  EXPECT_EQ(id_changes, kCuts);
}

TEST(SceneCutClip, NoTrackIdOfTheDetectedFacesIsSeenOnBothSidesOfACut) {
  const auto frames = ids_per_frame(decoded_clip() + "taconitedetect model=\"" + yunet_model() +
                                    "\" interval=3 ! taconitetrack ! appsink name=sink sync=false");
  ASSERT_EQ(frames.size(), 275u);
  std::vector<std::set<gint64>> shots(kCuts.size() + 1);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    std::size_t shot = 0;
    while (shot < kCuts.size() && static_cast<int>(i) >= kCuts[shot]) ++shot;
    shots[shot].insert(frames[i].begin(), frames[i].end());
  }
  // Lin before the last cut, the audience after it: tracks on both sides, none shared.
  EXPECT_FALSE(shots[2].empty());
  EXPECT_FALSE(shots[3].empty());
  for (std::size_t a = 0; a < shots.size(); ++a)
    for (std::size_t b = a + 1; b < shots.size(); ++b)
      for (gint64 id : shots[a]) EXPECT_EQ(shots[b].count(id), 0u) << "track " << id << " in shots " << a << " and " << b;
}

}  // namespace

int main(int argc, char** argv) {
  if (!fs::is_regular_file(clip())) {
    std::printf("no clip at '%s' (../shared/realfaces): the real-clip scene-cut test is skipped\n", clip().c_str());
    return 77;
  }
  if (!fs::is_regular_file(yunet_model())) {
    std::printf("no YuNet model at '%s': the real-clip scene-cut test is skipped\n", yunet_model().c_str());
    return 77;
  }
  gst_init(&argc, &argv);
  GST_ELEMENT_REGISTER(taconitedetect, nullptr);
  GST_ELEMENT_REGISTER(taconitetrack, nullptr);
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  gst_deinit();
  return result;
}
