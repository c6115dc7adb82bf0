// reinfer-mode=best with the recording fake engine: a track is re-embedded only when a clearly
// better face arrives, at most once every best-min-gap frames, never on a box the tracker
// predicted once it has an embedding; each face's quality reaches its ROI params and the JSON
// document; `untracked` decides which faces without a track id are embedded. Quality here is
// steered by the face's box size (no landmarks: box width / 112) on a sharp checkerboard, so every
// other part of the score stays put.
#include <gst/taconite/gsttaconiteface.h>
#include <json-glib/json-glib.h>

#include <algorithm>
#include <cmath>

#include "enums.hpp"
#include "face_document.hpp"
#include "gst_test_support.hpp"
#include "roi_params.hpp"

namespace {

using namespace gsttest;

const char* kCaps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";

struct Face {
  int id;  // < 0: no tracking id
  int x, y, size;
  bool predicted = false;             // the tracker guessed this box (detection param predicted=TRUE)
  std::vector<taconite::vision::Point2> landmarks = {};  // frame pixels, template order
  bool carried = false;  // a detector's carried box no tracker moved (fresh=FALSE, no predicted)
};

GstBuffer* frame(int index, const std::vector<Face>& faces) {
  GstBuffer* buffer = rgb_buffer(320, 240, [&](int x, int y) {
    const std::uint8_t v = ((x / 4 + y / 4) % 2) ? 220 : 30;
    return std::array<std::uint8_t, 3>{v, static_cast<std::uint8_t>(v / 2 + index), v};
  });
  GST_BUFFER_PTS(buffer) = index * (GST_SECOND / 30);
  for (const Face& f : faces) {
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(
        buffer, "face", static_cast<guint>(f.x), static_cast<guint>(f.y), static_cast<guint>(f.size),
        static_cast<guint>(f.size));
    if (f.id >= 0)
      gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("object_id", "id", G_TYPE_INT, f.id, nullptr));
    gst_taconite_roi_set_detection(roi, 0.9);
    if (f.predicted) gst_taconite_roi_set_predicted(roi, TRUE);
    if (f.carried) gst_taconite_roi_set_fresh(roi, FALSE);
    if (!f.landmarks.empty())
      gst_video_region_of_interest_meta_add_param(roi, taconite::gst::points_structure("landmarks", f.landmarks));
  }
  return buffer;
}

// The 112x112 template's points placed on a box, the nose moved sideways by `nose_dx` box pixels.
std::vector<taconite::vision::Point2> landmarks_on(int x, int y, int size, double nose_dx = 0.0) {
  std::vector<taconite::vision::Point2> points;
  for (const auto& p : taconite::vision::alignment_template(size, size)) points.push_back({x + p.x, y + p.y});
  points[2].x += nose_dx;
  return points;
}

class BestShotTest : public ::testing::Test {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override {
    if (h) gst_harness_teardown(h);
    uninstall_fake_engine();
  }
  void start(std::vector<std::pair<std::string, std::string>> props) {
    props.insert(props.begin(), {{"bundle", "fake"}, {"input-mode", "rois"}});
    h = adaface_harness(props);
    gst_harness_set_src_caps_str(h, kCaps);
  }
  // Pushes a frame and returns the first face's status.
  GstTaconiteEmbeddingStatus push(GstBuffer* in) {
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    EXPECT_NE(out, nullptr);
    if (!out) return GST_TACONITE_EMBEDDING_SKIPPED;
    const auto metas = embedding_metas(out);
    EXPECT_FALSE(metas.empty());
    const GstTaconiteEmbeddingStatus status = metas.empty() ? GST_TACONITE_EMBEDDING_SKIPPED : metas[0]->status;
    gst_buffer_unref(out);
    return status;
  }
  guint64 counter(const char* name) {
    guint64 v = 0;
    g_object_get(h->element, name, &v, nullptr);
    return v;
  }
  std::shared_ptr<FakeEngineState> engine;
  GstHarness* h = nullptr;
};

// A face walking towards the camera: its box grows 2 px a frame, 40 to 98 px, with a wobble.
int walking_size(int i) { return 40 + 2 * i + (i % 3 == 1 ? 3 : 0); }

TEST_F(BestShotTest, BestEmbedsFewerTimesThanIntervalAndOnlyBetterFaces) {
  guint64 interval_embeddings = 0;
  {
    start({{"reinfer-interval", "5"}, {"reinfer-growth", "100"}});
    for (int i = 0; i < 30; ++i) push(frame(i, {{7, 10, 10, walking_size(i)}}));
    interval_embeddings = counter("faces-embedded");
    gst_harness_teardown(h);
    h = nullptr;
  }
  start({{"reinfer-mode", "best"}, {"best-min-gap", "1"}});
  std::vector<int> computed;
  std::vector<double> scores;  // the pre-embedding score of each computed face
  for (int i = 0; i < 30; ++i) {
    GstBuffer* out = gst_harness_push_and_pull(h, frame(i, {{7, 10, 10, walking_size(i)}}));
    ASSERT_NE(out, nullptr);
    GstVideoRegionOfInterestMeta* roi = gst_buffer_get_video_region_of_interest_meta(out);
    const GstStructure* quality = gst_video_region_of_interest_meta_get_param(roi, "quality");
    double score = 0.0;
    ASSERT_TRUE(quality && gst_structure_get_double(quality, "score", &score)) << "frame " << i;
    if (embedding_metas(out).at(0)->status == GST_TACONITE_EMBEDDING_COMPUTED) {
      computed.push_back(i);
      scores.push_back(score);
    }
    gst_buffer_unref(out);
  }
  EXPECT_EQ(interval_embeddings, 6u);
  EXPECT_LT(counter("faces-embedded"), interval_embeddings);
  EXPECT_GE(computed.size(), 2u) << "the face got clearly better, so it was embedded again";
  EXPECT_EQ(computed.front(), 0) << "a new track is embedded at once";
  for (std::size_t k = 1; k < scores.size(); ++k)
    EXPECT_GT(scores[k], 1.1 * scores[k - 1]) << "frame " << computed[k] << ": best-margin 0.1";
  EXPECT_EQ(counter("faces-cached"), 30u - computed.size());
}

TEST_F(BestShotTest, AClearlyBetterFaceIsEmbeddedAndThenCachedAsTheTracksBest) {
  start({{"reinfer-mode", "best"}, {"best-min-gap", "3"}});
  EXPECT_EQ(push(frame(0, {{7, 10, 10, 40}})), GST_TACONITE_EMBEDDING_COMPUTED);
  for (int i = 1; i < 6; ++i) EXPECT_EQ(push(frame(i, {{7, 10, 10, 42}})), GST_TACONITE_EMBEDDING_CACHED) << i;
  EXPECT_EQ(push(frame(6, {{7, 10, 10, 110}})), GST_TACONITE_EMBEDDING_COMPUTED) << "a clearly better face";
  GstBuffer* out = gst_harness_push_and_pull(h, frame(7, {{7, 10, 10, 40}}));
  ASSERT_NE(out, nullptr);
  const auto metas = embedding_metas(out);
  ASSERT_EQ(metas.size(), 1u);
  EXPECT_EQ(metas[0]->status, GST_TACONITE_EMBEDDING_CACHED) << "a worse face reuses the best";
  EXPECT_EQ(metas[0]->cache_age, 1u) << "the frame 6 embedding";
  gst_buffer_unref(out);
  EXPECT_EQ(engine->faces_seen(), 2u);
}

TEST_F(BestShotTest, TheBudgetKeepsBestMinGapFramesBetweenEmbeddingsOfATrack) {
  start({{"reinfer-mode", "best"}, {"best-margin", "0"}, {"best-min-gap", "4"}});
  std::vector<int> computed;
  for (int i = 0; i < 20; ++i)  // better every frame: without the budget each would be embedded
    if (push(frame(i, {{7, 10, 10, 30 + 5 * i}})) == GST_TACONITE_EMBEDDING_COMPUTED) computed.push_back(i);
  EXPECT_EQ(computed, (std::vector<int>{0, 4, 8, 12, 16}));
  EXPECT_EQ(engine->faces_seen(), 5u);
}

TEST_F(BestShotTest, APredictedBoxIsNeverEmbeddedOnceTheTrackHasAnEmbedding) {
  start({{"reinfer-mode", "best"}, {"best-min-gap", "1"}});
  EXPECT_EQ(push(frame(0, {{7, 10, 10, 40}})), GST_TACONITE_EMBEDDING_COMPUTED);
  for (int i = 1; i < 6; ++i)  // far better, but guessed
    EXPECT_EQ(push(frame(i, {{7, 10, 10, 110, true}})), GST_TACONITE_EMBEDDING_CACHED) << i;
  EXPECT_EQ(engine->faces_seen(), 1u);
  EXPECT_EQ(push(frame(6, {{7, 10, 10, 110}})), GST_TACONITE_EMBEDDING_COMPUTED) << "measured again";
  EXPECT_EQ(push(frame(7, {{9, 150, 10, 60, true}})), GST_TACONITE_EMBEDDING_COMPUTED)
      << "a track without an embedding takes even a predicted box";
  EXPECT_EQ(push(frame(8, {{9, 150, 10, 60, true}})), GST_TACONITE_EMBEDDING_CACHED);
  EXPECT_EQ(engine->faces_seen(), 3u);
}

// Issue 29, bug 9 (defence in depth: taconitetrack never passes one on): a carried box that no
// tracker moved or flagged is no measurement either.
TEST_F(BestShotTest, ACarriedUnflaggedBoxIsNeverEmbeddedOnceTheTrackHasAnEmbedding) {
  start({{"reinfer-mode", "best"}, {"best-min-gap", "1"}});
  EXPECT_EQ(push(frame(0, {{7, 10, 10, 40}})), GST_TACONITE_EMBEDDING_COMPUTED);
  for (int i = 1; i < 4; ++i)  // far better, but the box is an earlier frame's
    EXPECT_EQ(push(frame(i, {{.id = 7, .x = 10, .y = 10, .size = 110, .carried = true}})),
              GST_TACONITE_EMBEDDING_CACHED)
        << i;
  EXPECT_EQ(engine->faces_seen(), 1u);
}

TEST_F(BestShotTest, IntervalModeIsUnchangedByPredictedBoxes) {
  start({{"reinfer-interval", "2"}});
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(push(frame(i, {{7, 10, 10, 40, true}})),
              i % 2 == 0 ? GST_TACONITE_EMBEDDING_COMPUTED : GST_TACONITE_EMBEDDING_CACHED);
}

double field(const GstStructure* s, const char* name) {
  double v = NAN;
  EXPECT_TRUE(gst_structure_get_double(s, name, &v)) << name;
  return v;
}

TEST_F(BestShotTest, QualityReachesTheRoiParamsAndTheJsonDocument) {
  start({{"reinfer-mode", "best"}, {"best-min-gap", "1"}});
  GstBuffer* out = gst_harness_push_and_pull(
      h, frame(0, {{7, 10, 10, 112, false, landmarks_on(10, 10, 112)},
                   {8, 180, 10, 112, false, landmarks_on(180, 10, 112, 25.0)},
                   {9, 100, 130, 100, true}}));
  ASSERT_NE(out, nullptr);
  const std::vector<GstVideoRegionOfInterestMeta*> rois = [&] {
    std::vector<GstVideoRegionOfInterestMeta*> all;
    gpointer state = nullptr;
    while (GstMeta* m = gst_buffer_iterate_meta_filtered(out, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
      all.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(m));
    return all;
  }();
  ASSERT_EQ(rois.size(), 3u);
  const GstStructure* frontal = gst_video_region_of_interest_meta_get_param(rois[0], "quality");
  const GstStructure* turned = gst_video_region_of_interest_meta_get_param(rois[1], "quality");
  const GstStructure* guessed = gst_video_region_of_interest_meta_get_param(rois[2], "quality");
  ASSERT_TRUE(frontal && turned && guessed);
  EXPECT_NEAR(field(frontal, "yaw"), 0.0, 2.0);
  EXPECT_GT(field(turned, "yaw"), 20.0);
  EXPECT_GT(field(frontal, "pose"), field(turned, "pose"));
  EXPECT_GT(field(frontal, "score"), field(turned, "score"));
  for (const char* name : {"size", "sharpness", "pitch", "roll"}) field(frontal, name);
  EXPECT_GT(field(frontal, "embedding-score"), 0.0);
  EXPECT_LE(field(frontal, "embedding-score"), 1.0);
  EXPECT_FALSE(gst_structure_has_field(guessed, "yaw")) << "no landmarks, no angles";
  EXPECT_GT(field(guessed, "score"), 0.0) << "a new track's predicted box is assessed and embedded";

  taconite::gst::FrameContext context;
  context.width = 320;
  context.height = 240;
  const std::optional<std::string> document = taconite::gst::face_document(out, context);
  gst_buffer_unref(out);
  ASSERT_TRUE(document);
  JsonParser* parser = json_parser_new();
  ASSERT_TRUE(json_parser_load_from_data(parser, document->c_str(), -1, nullptr)) << *document;
  JsonArray* faces = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "faces");
  ASSERT_EQ(json_array_get_length(faces), 3u);
  JsonObject* q0 = json_object_get_object_member(json_array_get_object_element(faces, 0), "quality");
  JsonObject* q2 = json_object_get_object_member(json_array_get_object_element(faces, 2), "quality");
  ASSERT_TRUE(q0 && q2) << *document;
  for (const char* name : {"score", "size", "pose", "sharpness", "yaw", "pitch", "roll", "embedding_score"})
    EXPECT_EQ(json_node_get_value_type(json_object_get_member(q0, name)), G_TYPE_DOUBLE) << name;
  EXPECT_TRUE(json_object_get_null_member(q2, "yaw"));
  g_object_unref(parser);
}

TEST_F(BestShotTest, ACachedFaceCarriesItsEmbeddingsScoreAndAFaceWithoutQualityIsNullInJson) {
  start({{"reinfer-interval", "3"}});
  push(frame(0, {{7, 10, 10, 60}}));
  GstBuffer* out = gst_harness_push_and_pull(h, frame(1, {{7, 10, 10, 60}}));
  ASSERT_NE(out, nullptr);
  GstVideoRegionOfInterestMeta* roi = gst_buffer_get_video_region_of_interest_meta(out);
  const GstStructure* q = gst_video_region_of_interest_meta_get_param(roi, "quality");
  ASSERT_TRUE(q) << "interval mode: the cached embedding's score";
  EXPECT_FALSE(gst_structure_has_field(q, "score")) << "a cached face is not assessed in interval mode";
  EXPECT_GT(field(q, "embedding-score"), 0.0);
  gst_buffer_unref(out);

  GstBuffer* bare = frame(2, {{-1, 10, 10, 60}});  // never through the element: no quality param
  taconite::gst::FrameContext context;
  const std::optional<std::string> document = taconite::gst::face_document(bare, context);
  gst_buffer_unref(bare);
  ASSERT_TRUE(document);
  EXPECT_NE(document->find("\"quality\":null"), std::string::npos) << *document;
}

// Issue 32: a track taconitetrack has not confirmed yet carries no id, so nothing of it can be
// reused: `untracked` says on which of its frames it is embedded. Frames: an untracked face
// measured, predicted, carried, measured again, beside a tracked face whose first box is predicted.
std::vector<std::vector<Face>> untracked_sequence() {
  const Face tracked{.id = 7, .x = 180, .y = 10, .size = 60, .predicted = true};
  return {{{-1, 10, 10, 60}, tracked},
          {{.id = -1, .x = 10, .y = 10, .size = 60, .predicted = true}, tracked},
          {{.id = -1, .x = 10, .y = 10, .size = 60, .carried = true}, tracked},
          {{-1, 10, 10, 60}, tracked}};
}

// The untracked face's status per frame (-1: no embedding meta) and the tracked face's.
std::vector<int> untracked_statuses(GstHarness* h, std::vector<GstTaconiteEmbeddingStatus>* tracked) {
  std::vector<int> statuses;
  const std::vector<std::vector<Face>> frames = untracked_sequence();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    GstBuffer* out = gst_harness_push_and_pull(h, frame(static_cast<int>(i), frames[i]));
    EXPECT_NE(out, nullptr);
    if (!out) return statuses;
    int untracked = -1;
    for (GstTaconiteEmbeddingMeta* meta : embedding_metas(out)) {
      GstVideoRegionOfInterestMeta* roi = gst_buffer_get_video_region_of_interest_meta_id(out, meta->roi_id);
      EXPECT_NE(roi, nullptr);
      if (roi && gst_video_region_of_interest_meta_get_param(roi, "object_id"))
        tracked->push_back(meta->status);
      else
        untracked = meta->status;
    }
    EXPECT_EQ(gst_buffer_get_n_meta(out, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE), 2u) << "no ROI is removed";
    statuses.push_back(untracked);
    gst_buffer_unref(out);
  }
  return statuses;
}

TEST_F(BestShotTest, UntrackedDecidesOnWhichFramesAFaceWithoutATrackIdIsEmbedded) {
  const int computed = GST_TACONITE_EMBEDDING_COMPUTED;
  const struct {
    const char* value;
    std::vector<int> untracked;
  } cases[] = {{"every-frame", {computed, computed, computed, computed}},
               {"measured", {computed, -1, -1, computed}},
               {"never", {-1, -1, -1, -1}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.value);
    for (const char* mode : {"best", "interval"}) {
      SCOPED_TRACE(mode);
      start({{"reinfer-mode", mode}, {"reinfer-interval", "10"}, {"untracked", c.value}});
      const std::size_t seen_before = engine->faces_seen();
      std::vector<GstTaconiteEmbeddingStatus> tracked;
      EXPECT_EQ(untracked_statuses(h, &tracked), c.untracked);
      EXPECT_EQ(tracked, (std::vector<GstTaconiteEmbeddingStatus>{GST_TACONITE_EMBEDDING_COMPUTED,
                                                                  GST_TACONITE_EMBEDDING_CACHED,
                                                                  GST_TACONITE_EMBEDDING_CACHED,
                                                                  GST_TACONITE_EMBEDDING_CACHED}))
          << "a tracked face is never affected";
      const auto untracked_embedded = static_cast<guint64>(std::count(c.untracked.begin(), c.untracked.end(), computed));
      EXPECT_EQ(engine->faces_seen() - seen_before, 1u + untracked_embedded);
      EXPECT_EQ(counter("faces-embedded"), 1u + untracked_embedded);
      EXPECT_EQ(counter("faces-skipped"), 0u) << "a face left out is not a skipped one";
      gst_harness_teardown(h);
      h = nullptr;
    }
  }
}

TEST_F(BestShotTest, UntrackedNeverStillEmbedsWholeBufferCrops) {
  start({{"input-mode", "crops"}, {"untracked", "never"}});
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=112,height=112,framerate=30/1");
  GstBuffer* crop = rgb_buffer(112, 112, [](int x, int y) {
    return std::array<std::uint8_t, 3>{static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y), 90};
  });
  EXPECT_EQ(push(crop), GST_TACONITE_EMBEDDING_COMPUTED);
  EXPECT_EQ(engine->faces_seen(), 1u);
}

std::string untracked_nick(GstElement* element) {
  GValue value = G_VALUE_INIT;
  g_value_init(&value, taconite_untracked_get_type());
  g_object_get_property(G_OBJECT(element), "untracked", &value);
  GEnumClass* klass = static_cast<GEnumClass*>(g_type_class_ref(taconite_untracked_get_type()));
  const GEnumValue* v = g_enum_get_value(klass, g_value_get_enum(&value));
  std::string nick = v ? v->value_nick : "?";
  g_type_class_unref(klass);
  return nick;
}

void count_warning(const gchar*, GLogLevelFlags, const gchar*, gpointer n) { ++*static_cast<int*>(n); }

TEST_F(BestShotTest, UntrackedChangesWhilePlayingAndRefusesUnknownValues) {
  start({{"reinfer-mode", "best"}});
  EXPECT_EQ(untracked_nick(h->element), "every-frame");
  GstBuffer* out = gst_harness_push_and_pull(h, frame(0, {{-1, 10, 10, 60}}));
  EXPECT_EQ(embedding_metas(out).size(), 1u) << "every-frame by default";
  gst_buffer_unref(out);
  gst_util_set_object_arg(G_OBJECT(h->element), "untracked", "never");
  out = gst_harness_push_and_pull(h, frame(1, {{-1, 10, 10, 60}}));
  EXPECT_TRUE(embedding_metas(out).empty()) << "the next frame follows the new value";
  gst_buffer_unref(out);

  int refused = 0;
  const guint handler = g_log_set_handler("GLib-GObject", G_LOG_LEVEL_WARNING, count_warning, &refused);
  g_object_set(h->element, "untracked", 3, nullptr);
  g_object_set(h->element, "untracked", -1, nullptr);
  g_log_remove_handler("GLib-GObject", handler);
  EXPECT_EQ(refused, 2) << "each out-of-range value refused with a warning";
  gst_util_set_object_arg(G_OBJECT(h->element), "untracked", "sometimes");  // not a value: ignored
  EXPECT_EQ(untracked_nick(h->element), "never") << "the value stays";
}

}  // namespace

// max-embeddings: three tracks appear at once; the engine takes one face a frame, so the stream is
// never held for all three. The others pass on skipped until their turn, then reuse their embedding.
TEST_F(BestShotTest, MaxEmbeddingsSpreadsNewTracksOverFramesAndKeepsTheirCachedEmbeddings) {
  start({{"reinfer-mode", "best"}, {"best-min-gap", "1"}, {"max-embeddings", "1"}});
  const std::vector<Face> faces = {{1, 10, 10, 40}, {2, 110, 10, 60}, {3, 210, 10, 50}};
  std::vector<std::vector<GstTaconiteEmbeddingStatus>> statuses;
  for (int i = 0; i < 4; ++i) {
    GstBuffer* out = gst_harness_push_and_pull(h, frame(i, faces));
    ASSERT_NE(out, nullptr);
    std::vector<GstTaconiteEmbeddingStatus> frame_statuses;
    for (const auto* meta : embedding_metas(out)) frame_statuses.push_back(meta->status);
    statuses.push_back(frame_statuses);
    gst_buffer_unref(out);
  }
  const auto C = GST_TACONITE_EMBEDDING_COMPUTED, S = GST_TACONITE_EMBEDDING_SKIPPED,
             K = GST_TACONITE_EMBEDDING_CACHED;
  using Row = std::vector<GstTaconiteEmbeddingStatus>;
  EXPECT_EQ(statuses[0], (Row{S, C, S})) << "the best-looking new face (the largest) first";
  EXPECT_EQ(statuses[1], (Row{S, K, C}));
  EXPECT_EQ(statuses[2], (Row{C, K, K}));
  EXPECT_EQ(statuses[3], (Row{K, K, K}));
  EXPECT_EQ(engine->batch_sizes, (std::vector<std::size_t>{1, 1, 1}));
  EXPECT_EQ(counter("faces-skipped"), 3u);
  EXPECT_EQ(counter("faces-cached"), 6u);
}

TEST_F(BestShotTest, MaxEmbeddingsPutsATrackWithoutAnEmbeddingBeforeABetterViewOfAKnownOne) {
  start({{"reinfer-mode", "best"}, {"best-min-gap", "1"}, {"max-embeddings", "1"}});
  EXPECT_EQ(push(frame(0, {{1, 10, 10, 40}})), GST_TACONITE_EMBEDDING_COMPUTED);
  // Track 1 now looks far better (it would be re-embedded), and track 2 is new and smaller.
  GstBuffer* out = gst_harness_push_and_pull(h, frame(1, {{1, 10, 10, 110}, {2, 200, 10, 40}}));
  ASSERT_NE(out, nullptr);
  const auto metas = embedding_metas(out);
  ASSERT_EQ(metas.size(), 2u);
  EXPECT_EQ(metas[0]->status, GST_TACONITE_EMBEDDING_CACHED) << "the known track waits, keeping its embedding";
  EXPECT_EQ(metas[1]->status, GST_TACONITE_EMBEDDING_COMPUTED) << "the new track first";
  gst_buffer_unref(out);
  EXPECT_EQ(push(frame(2, {{1, 10, 10, 110}, {2, 200, 10, 40}})), GST_TACONITE_EMBEDDING_COMPUTED)
      << "then the better view";
}
