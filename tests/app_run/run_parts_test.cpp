// taconite-run's parts without a pipeline: a track event document parsed (epoch_s given or computed
// from utc, end members, bad documents refused) and the pipeline words (--print and the runner).
#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline_launch.hpp"
#include "track_event_parse.hpp"

namespace taconite::app {
namespace {

const std::string kNew =
    R"({"schema":"taconite-tracks/1","event":"new","stream":"door1","track_id":1,"uid":"4b0c58d2-5f3e",)"
    R"("utc":"2026-12-01T12:27:04.879027Z","pts_ns":200000000,"label_state":"pending","label":null,)"
    R"("label_id":null,"confidence":null,"best_face":null})";
const std::string kEnd =
    R"({"schema":"taconite-tracks/1","event":"end","stream":"door1","track_id":1,"uid":"4b0c58d2-5f3e",)"
    R"("utc":"2026-12-01T12:27:06.163601Z","pts_ns":1400000000,"label_state":"known","label":"astronaut",)"
    R"("label_id":1,"confidence":0.83,"best_face":null,"reason":"eos","first_utc":"2026-12-01T12:27:04.879027Z",)"
    R"("last_utc":"2026-12-01T12:27:06.163550Z","first_pts_ns":200000000,"last_pts_ns":1400000000,"dwell_s":1.2,)"
    R"("frames":13,"identified":true})";

TEST(TrackEventParse, EpochSecondsComeFromUtcWithoutEpochS) {
  Result<TrackEvent> event = parse_track_event(kNew);
  ASSERT_TRUE(event) << event.error().message;
  EXPECT_EQ(event.value().camera, "door1");
  EXPECT_EQ(event.value().kind, "new");
  EXPECT_EQ(event.value().uid, "4b0c58d2-5f3e");
  EXPECT_EQ(event.value().track_id, 1);
  EXPECT_NEAR(event.value().epoch_s, 1796128024.879027, 1e-6);  // python's datetime(...).timestamp()
  EXPECT_EQ(event.value().label_state, "pending");
  EXPECT_FALSE(event.value().label);
  EXPECT_FALSE(event.value().confidence);
  EXPECT_EQ(event.value().document, kNew);
}

TEST(TrackEventParse, EpochSWinsWhenTheDocumentHasIt) {
  std::string doc = kNew;
  doc.insert(doc.find("\"utc\""), R"("epoch_s":1700000000.5,)");
  Result<TrackEvent> event = parse_track_event(doc);
  ASSERT_TRUE(event) << event.error().message;
  EXPECT_DOUBLE_EQ(event.value().epoch_s, 1700000000.5);
}

TEST(TrackEventParse, AnEndCarriesItsReasonDwellAndFirstAndLastTimes) {
  Result<TrackEvent> event = parse_track_event(kEnd);
  ASSERT_TRUE(event) << event.error().message;
  const TrackEvent& e = event.value();
  EXPECT_EQ(e.reason, "eos");
  EXPECT_EQ(e.label, "astronaut");
  EXPECT_EQ(e.label_id, 1);
  EXPECT_DOUBLE_EQ(*e.confidence, 0.83);
  EXPECT_DOUBLE_EQ(*e.dwell_s, 1.2);
  EXPECT_EQ(e.frames, 13);
  EXPECT_NEAR(e.first_epoch_s, 1796128024.879027, 1e-6);
  EXPECT_NEAR(e.last_epoch_s, 1796128026.16355, 1e-6);
}

TEST(TrackEventParse, WhatIsNoTrackEventIsRefusedSayingWhy) {
  EXPECT_FALSE(parse_track_event("not json"));
  EXPECT_FALSE(parse_track_event("[1]"));
  Result<TrackEvent> faces = parse_track_event(R"({"schema":"taconite-faces/1","faces":[]})");
  ASSERT_FALSE(faces);
  EXPECT_NE(faces.error().message.find("taconite-tracks/1"), std::string::npos);
  std::string bad_time = kNew;
  bad_time.replace(bad_time.find("2026-12-01T12:27:04"), 19, "yesterday at noon!!");
  Result<TrackEvent> event = parse_track_event(bad_time);
  ASSERT_FALSE(event);
  EXPECT_NE(event.error().message.find("utc"), std::string::npos) << event.error().message;
  std::string bad_kind = kNew;
  bad_kind.replace(bad_kind.find("\"new\""), 5, "\"old\"");
  EXPECT_FALSE(parse_track_event(bad_kind));
}

bool has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

TEST(PipelineWords, TheRecommendedChainWithIdentifyOnlyWithAGallery) {
  Config config;
  config.model = "/m/ir18";
  config.detector = "/m/yunet.onnx";
  CameraConfig camera;
  camera.name = "door1";
  camera.uri = "rtsp://cam/1";
  camera.detect_interval = 4;
  std::vector<std::string> words = pipeline_words(config, camera);
  for (const char* word : {"taconitecamera", "stream=door1", "uri=rtsp://cam/1", "taconitedetect", "interval=4",
                           "taconitetrack", "taconiteadaface", "reinfer-mode=best", "max-queued=1", "untracked=never",
                           "method=bus", "messages=tracks", "fakesink"})
    EXPECT_TRUE(has(words, word)) << word;
  EXPECT_FALSE(has(words, "taconiteidentify"));
  EXPECT_FALSE(has(words, "drop=none")) << "a live camera keeps the freshest frame";
  for (const std::string& word : words) EXPECT_FALSE(word.starts_with("max-rate=")) << "0: every frame";
  camera.max_rate = 5;
  EXPECT_TRUE(has(pipeline_words(config, camera), "max-rate=5"));
  camera.max_rate = 0;
  EXPECT_TRUE(has(words, "precision=auto"));
  config.precision = "int8";
  EXPECT_TRUE(has(pipeline_words(config, camera), "precision=int8"));
  config.gallery = "/g/faces.db";
  config.threshold = 0.5;
  camera.uri = "file:///v/door.avi";
  words = pipeline_words(config, camera);
  EXPECT_TRUE(has(words, "taconiteidentify"));
  EXPECT_TRUE(has(words, "gallery=/g/faces.db"));
  EXPECT_TRUE(has(words, "threshold=0.5"));
  EXPECT_TRUE(has(words, "drop=none")) << "a recording: every frame";
}

TEST(PipelineWords, TheLaunchLineQuotesWhatTheShellWouldSplit) {
  const std::string line = gst_launch_line({"taconitecamera", "credentials-file=/etc/my cams/it's", "!", "fakesink"});
  EXPECT_EQ(line, "gst-launch-1.0 -e taconitecamera 'credentials-file=/etc/my cams/it'\\''s' ! fakesink");
}

}  // namespace
}  // namespace taconite::app
