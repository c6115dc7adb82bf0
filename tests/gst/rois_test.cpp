// rois and auto modes: which ROIs are embedded, their ids, crops with margin (and boxes far
// larger than the frame), ROI params, messages, and the metadata surviving real converters
// (videoconvert, videoscale, capsfilter).
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "gst_test_support.hpp"

namespace {

using namespace gsttest;

const char* kCaps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";

// A grey frame with a green square at (100,60) 80x80 and a blue one at (10,10) 20x20.
std::array<std::uint8_t, 3> scene(int x, int y) {
  if (x >= 100 && x < 180 && y >= 60 && y < 140) return {0, 255, 0};
  if (x >= 10 && x < 30 && y >= 10 && y < 30) return {0, 0, 255};
  return {128, 128, 128};
}

GstBuffer* scene_buffer() { return rgb_buffer(320, 240, scene); }

GstVideoRegionOfInterestMeta* add_roi(GstBuffer* buffer, const char* type, int x, int y, int w, int h, gint id = 0) {
  GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(
      buffer, type, static_cast<guint>(x), static_cast<guint>(y), static_cast<guint>(w), static_cast<guint>(h));
  roi->id = id;
  return roi;
}

std::vector<GstVideoRegionOfInterestMeta*> rois(GstBuffer* buffer) {
  std::vector<GstVideoRegionOfInterestMeta*> out;
  gpointer state = nullptr;
  while (GstMeta* m = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    out.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(m));
  return out;
}

class RoisTest : public ::testing::Test {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override { uninstall_fake_engine(); }
  GstBuffer* run(GstBuffer* in, std::vector<std::pair<std::string, std::string>> props) {
    props.insert(props.begin(), {"bundle", "fake"});
    GstHarness* h = adaface_harness(props);
    gst_harness_set_src_caps_str(h, kCaps);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    gst_harness_teardown(h);
    return out;
  }
  std::shared_ptr<FakeEngineState> engine;
};

TEST_F(RoisTest, EmbedsFaceRoisAndGivesSharedIdsUniqueOnes) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 100, 60, 80, 80);      // id 0, the first ROI with it: kept
  add_roi(in, "face", 10, 10, 20, 20, 7);    // upstream id kept
  add_roi(in, "car", 0, 0, 50, 50);          // other type: untouched
  add_roi(in, "face", 200, 100, 40, 40);     // id 0 again: gets a new id
  GstBuffer* out = run(in, {{"input-mode", "rois"}});
  ASSERT_NE(out, nullptr);
  const auto all = rois(out);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0]->id, 0);
  EXPECT_EQ(all[1]->id, 7);
  EXPECT_EQ(all[2]->id, 0) << "ROIs of other types keep their id";
  EXPECT_EQ(all[3]->id, 8) << "new ids start above the largest id on the buffer";

  const auto metas = embedding_metas(out);
  ASSERT_EQ(metas.size(), 3u);
  EXPECT_EQ(metas[0]->roi_id, 0);
  EXPECT_EQ(metas[1]->roi_id, 7);
  EXPECT_EQ(metas[2]->roi_id, 8);
  for (GstTaconiteEmbeddingMeta* m : metas) EXPECT_FALSE(m->aligned) << "a box crop is not aligned";

  // The ROI params carry the same embedding as the meta of that ROI.
  for (int i : {0, 1, 3}) {
    GstStructure* params = gst_video_region_of_interest_meta_get_param(all[i], GST_TACONITE_EMBEDDING_PARAMS_NAME);
    ASSERT_NE(params, nullptr) << i;
    guint dim = 0;
    double norm = 0;
    gfloat* e = gst_taconite_embedding_params_get_embedding(params, &dim, &norm);
    GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta_for_roi(out, all[i]->id);
    ASSERT_NE(meta, nullptr);
    ASSERT_EQ(dim, meta->dim);
    EXPECT_EQ(0, std::memcmp(e, meta->embedding, dim * sizeof(float)));
    EXPECT_DOUBLE_EQ(norm, meta->norm);
    g_free(e);
  }
  EXPECT_EQ(gst_video_region_of_interest_meta_get_param(all[2], GST_TACONITE_EMBEDDING_PARAMS_NAME), nullptr);
  gst_buffer_unref(out);
}

// Reaches every face of `out` both ways docs/gstreamer.md shows, checks that both agree and
// return the ROIs' ids (in ROI order).
std::vector<gint> faces_reached_both_ways(GstBuffer* out) {
  std::vector<gint> ids;
  std::set<GstTaconiteEmbeddingMeta*> metas_seen;
  // 1. Iterate the ROI metas and read their "taconite-embedding" params.
  for (GstVideoRegionOfInterestMeta* roi : rois(out)) {
    GstStructure* params = gst_video_region_of_interest_meta_get_param(roi, GST_TACONITE_EMBEDDING_PARAMS_NAME);
    if (!params) continue;
    guint dim = 0;
    gfloat* e = gst_taconite_embedding_params_get_embedding(params, &dim, nullptr);
    // 2. The embedding meta of that ROI, by the ROI's id.
    GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta_for_roi(out, roi->id);
    EXPECT_NE(meta, nullptr) << "ROI " << roi->id;
    if (meta && e) {
      EXPECT_EQ(0, std::memcmp(e, meta->embedding, dim * sizeof(float))) << "ROI " << roi->id;
      metas_seen.insert(meta);
    }
    g_free(e);
    ids.push_back(roi->id);
  }
  // 3. Iterate the embedding metas and find each one's ROI by id: every meta names a distinct ROI.
  std::set<GstVideoRegionOfInterestMeta*> rois_seen;
  for (GstTaconiteEmbeddingMeta* meta : embedding_metas(out)) {
    GstVideoRegionOfInterestMeta* roi = gst_buffer_get_video_region_of_interest_meta_id(out, meta->roi_id);
    EXPECT_NE(roi, nullptr) << "meta for ROI " << meta->roi_id;
    rois_seen.insert(roi);
  }
  EXPECT_EQ(metas_seen.size(), ids.size()) << "each ROI reaches its own embedding meta";
  EXPECT_EQ(rois_seen.size(), embedding_metas(out).size()) << "each embedding meta reaches its own ROI";
  return ids;
}

TEST_F(RoisTest, FacedetectAllZeroIdsEachReachTheirOwnEmbedding) {
  // facedetect leaves every id 0; the buffer is also shared (a tee), so the element works on a copy.
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 100, 60, 80, 80);
  add_roi(in, "face", 10, 10, 20, 20);
  add_roi(in, "face", 200, 100, 40, 40);
  gst_buffer_ref(in);
  GstBuffer* out = run(in, {});
  const std::vector<gint> ids = faces_reached_both_ways(out);
  EXPECT_EQ(ids, (std::vector<gint>{0, 1, 2}));
  const auto all = rois(out);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1]->x, 10u) << "the copy keeps the ROI order";
  const auto metas = embedding_metas(out);
  ASSERT_EQ(metas.size(), 3u);
  EXPECT_NE(0, std::memcmp(metas[0]->embedding, metas[1]->embedding, metas[0]->dim * sizeof(float)))
      << "different faces, different embeddings";
  for (GstVideoRegionOfInterestMeta* roi : rois(in)) EXPECT_EQ(roi->id, 0) << "the shared input is untouched";
  gst_buffer_unref(out);
  gst_buffer_unref(in);
}

TEST_F(RoisTest, NewIdsNeverOverflowPastIntMax) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 100, 60, 80, 80, INT_MAX);
  add_roi(in, "face", 10, 10, 20, 20);
  add_roi(in, "face", 200, 100, 40, 40);  // a second id 0: the next id after INT_MAX wraps to 1
  GstBuffer* out = run(in, {});
  EXPECT_EQ(faces_reached_both_ways(out), (std::vector<gint>{INT_MAX, 0, 1}));
  gst_buffer_unref(out);
}

TEST_F(RoisTest, AnUpstreamIdOfMinusOneIsNotTakenForTheWholeBuffer) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 100, 60, 80, 80, GST_TACONITE_WHOLE_BUFFER_ROI_ID);
  GstBuffer* out = run(in, {});
  const std::vector<gint> ids = faces_reached_both_ways(out);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0], 1) << "the next id above the largest (0 when all are negative)";
  EXPECT_EQ(gst_buffer_get_taconite_embedding_meta_for_roi(out, GST_TACONITE_WHOLE_BUFFER_ROI_ID), nullptr);
  gst_buffer_unref(out);
}

TEST_F(RoisTest, DuplicateUpstreamIdsAreMadeUnique) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "car", 0, 0, 50, 50, 5);  // the first ROI with id 5 keeps it
  add_roi(in, "face", 100, 60, 80, 80, 5);
  add_roi(in, "face", 10, 10, 20, 20, 5);
  add_roi(in, "face", 200, 100, 40, 40, 6);
  GstBuffer* out = run(in, {});
  EXPECT_EQ(faces_reached_both_ways(out), (std::vector<gint>{7, 8, 6}));
  EXPECT_EQ(rois(out)[0]->id, 5);
  gst_buffer_unref(out);
}

TEST_F(RoisTest, CropIsTheSquareBoxResized) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 100, 60, 80, 80);
  gst_buffer_unref(run(in, {{"input-mode", "rois"}}));
  ASSERT_EQ(engine->faces_seen(), 1u);
  const auto green = [](int, int) { return std::array<std::uint8_t, 3>{0, 255, 0}; };
  EXPECT_EQ(engine->inputs[0], expected_chw(112, 112, green)) << "margin 0 crops exactly the green square";
}

TEST_F(RoisTest, MarginWidensTheCropAndOutsideTheFrameIsBlack) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 100, 60, 80, 80);
  add_roi(in, "face", 300, 0, 40, 40);  // half outside on the right
  gst_buffer_unref(run(in, {{"input-mode", "rois"}, {"margin", "0.25"}}));
  ASSERT_EQ(engine->faces_seen(), 2u);
  // 80 px box + 20 px each side = 120 px square centred on the green square: the border is grey.
  const std::vector<float>& wide = engine->inputs[0];
  const float grey = (128 / 255.0f - 0.5f) / 0.5f;
  EXPECT_NEAR(wide[0], grey, 1e-6) << "top-left corner comes from around the box";
  EXPECT_NEAR(wide[112 * 112 + 56 * 112 + 56], 1.0f, 1e-6) << "the centre is green";
  // The second box reaches x=340 in a 320-wide frame: its right edge is black (-1 everywhere).
  const std::vector<float>& edge = engine->inputs[1];
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(edge[c * 112 * 112 + 56 * 112 + 111], -1.0f, 1e-6);
  EXPECT_NEAR(edge[56 * 112 + 5], grey, 1e-6);
}

// Runs `work` on another thread and ends the process if it has not finished after `limit`: a
// generous hang guard (a hung test would otherwise stall the suite), not a speed assertion.
void with_hang_guard(std::chrono::seconds limit, const std::function<void()>& work) {
  std::future<void> done = std::async(std::launch::async, work);
  if (done.wait_for(limit) == std::future_status::timeout) {
    std::fprintf(stderr, "hang guard: still running after %lld s\n", static_cast<long long>(limit.count()));
    std::_Exit(1);
  }
  done.get();
}

class HugeBoxTest : public RoisTest, public ::testing::WithParamInterface<std::tuple<guint, const char*>> {};

TEST_P(HugeBoxTest, IsClippedToTheFrameBeforeAnyAllocation) {
  const auto [side, margin] = GetParam();
  GstBuffer* out = nullptr;
  with_hang_guard(std::chrono::seconds(120), [&, side = side, margin = margin] {
    GstBuffer* in = scene_buffer();
    gst_buffer_add_video_region_of_interest_meta(in, "face", 100, 60, side, side);
    out = run(in, {{"margin", margin}});
  });
  ASSERT_NE(out, nullptr);
  const auto metas = embedding_metas(out);
  ASSERT_EQ(metas.size(), 1u);
  EXPECT_EQ(metas[0]->dim, 512u);
  gst_buffer_unref(out);
  ASSERT_EQ(engine->faces_seen(), 1u);
  // The box starts at (100,60) and reaches far beyond the frame: the frame's part is at most a
  // corner of the square, the rest is black; nothing is garbage.
  const std::vector<float>& face = engine->inputs[0];
  std::size_t black = 0;
  for (float v : face) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LE(v, 1.0f);
    black += v == -1.0f;
  }
  EXPECT_GT(black, face.size() * 9 / 10) << "the frame covers at most a tenth of the square";
  EXPECT_LT(black, face.size()) << "the frame shows (at least as one pixel)";
}

INSTANTIATE_TEST_SUITE_P(Boxes, HugeBoxTest,
                         ::testing::Combine(::testing::Values(0x7FFFFFFFu, 0xFFFFFFFFu, 100000u, 40000u),
                                            ::testing::Values("0", "1")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "_margin" + std::get<1>(info.param);
                         });

TEST_F(RoisTest, MinFaceSizeAndMaxFacesSelect) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 10, 10, 20, 20);    // too small
  add_roi(in, "face", 100, 60, 50, 60);   // kept (second largest)
  add_roi(in, "face", 150, 100, 90, 90);  // kept (largest)
  add_roi(in, "face", 0, 150, 40, 40);    // dropped by max-faces
  GstBuffer* out = run(in, {{"input-mode", "rois"}, {"min-face-size", "30"}, {"max-faces", "2"}});
  const auto metas = embedding_metas(out);
  const auto all = rois(out);
  ASSERT_EQ(metas.size(), 2u);
  EXPECT_EQ(metas[0]->roi_id, all[1]->id) << "output follows ROI order";
  EXPECT_EQ(metas[1]->roi_id, all[2]->id);
  gst_buffer_unref(out);
}

// facedetect gives every ROI id 0. A face left out (min-face-size, max-faces) must not keep the id
// of an embedded one, or whoever looks embeddings up by id gives it that face's embedding.
TEST_F(RoisTest, FacesNotSelectedGetIdsOfTheirOwnToo) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 100, 60, 80, 80);  // embedded, first with id 0: keeps it
  add_roi(in, "face", 10, 10, 20, 20);   // too small, id 0 too
  add_roi(in, "face", 0, 150, 40, 40);   // dropped by max-faces, id 0 too
  add_roi(in, "car", 0, 0, 50, 50);      // other type: untouched
  GstBuffer* out = run(in, {{"input-mode", "rois"}, {"min-face-size", "30"}, {"max-faces", "1"}});
  const auto all = rois(out);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0]->id, 0);
  EXPECT_EQ(std::set<gint>({all[0]->id, all[1]->id, all[2]->id}).size(), 3u) << "every face ROI has an id of its own";
  EXPECT_EQ(all[3]->id, 0) << "ROIs of other types keep their id";
  ASSERT_EQ(embedding_metas(out).size(), 1u);
  EXPECT_NE(gst_buffer_get_taconite_embedding_meta_for_roi(out, all[0]->id), nullptr);
  EXPECT_EQ(gst_buffer_get_taconite_embedding_meta_for_roi(out, all[1]->id), nullptr);
  EXPECT_EQ(gst_buffer_get_taconite_embedding_meta_for_roi(out, all[2]->id), nullptr);
  gst_buffer_unref(out);
}

TEST_F(RoisTest, AutoModeUsesRoisWhenPresentElseTheWholeBufferUnaligned) {
  GstBuffer* with = scene_buffer();
  add_roi(with, "face", 100, 60, 80, 80);
  GstBuffer* out = run(with, {{"input-mode", "auto"}});
  auto metas = embedding_metas(out);
  ASSERT_EQ(metas.size(), 1u);
  EXPECT_EQ(metas[0]->roi_id, 0);
  gst_buffer_unref(out);

  out = run(scene_buffer(), {{"input-mode", "auto"}});
  metas = embedding_metas(out);
  ASSERT_EQ(metas.size(), 1u);
  EXPECT_EQ(metas[0]->roi_id, GST_TACONITE_WHOLE_BUFFER_ROI_ID);
  EXPECT_FALSE(metas[0]->aligned) << "a whole frame is no aligned face crop (only crops mode promises that)";
  gst_buffer_unref(out);
}

TEST_F(RoisTest, ByDefaultAFrameWithoutFaceRoisGetsNoEmbedding) {
  // Behind a detector, an empty frame is not a face: the default is input-mode=rois.
  GstBuffer* out = run(scene_buffer(), {});
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(embedding_metas(out).empty());
  EXPECT_EQ(engine->faces_seen(), 0u);
  gst_buffer_unref(out);
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  gint mode = -1;
  g_object_get(element, "input-mode", &mode, nullptr);
  EXPECT_EQ(mode, 1) << "rois";
  gst_object_unref(element);
}

TEST_F(RoisTest, ASharedBufferWithoutFacesIsPassedOnUncopied) {
  // Nothing is attached, so there is nothing to make writable: the very same buffer goes on.
  GstBuffer* in = scene_buffer();
  add_roi(in, "car", 0, 0, 50, 50);
  add_roi(in, "face", 10, 10, 20, 20);  // below min-face-size
  gst_buffer_ref(in);
  GstBuffer* out = run(in, {{"min-face-size", "30"}});
  EXPECT_EQ(out, in) << "no deep copy of a buffer that gets no metas";
  EXPECT_TRUE(embedding_metas(out).empty());
  gst_buffer_unref(out);
  gst_buffer_unref(in);
}

TEST_F(RoisTest, RoisModeWithoutFacesPassesTheFrameUntouched) {
  GstBuffer* in = scene_buffer();
  add_roi(in, "car", 0, 0, 50, 50);
  GstBuffer* out = run(in, {{"input-mode", "rois"}});
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(embedding_metas(out).empty());
  EXPECT_EQ(engine->faces_seen(), 0u);
  gst_buffer_unref(out);
}

TEST_F(RoisTest, SharedInputBufferIsNotModified) {
  // Writability: another holder of the input (a tee branch) must not see our ids or metas.
  GstBuffer* in = scene_buffer();
  add_roi(in, "face", 100, 60, 80, 80);
  gst_buffer_ref(in);
  GstBuffer* out = run(in, {{"input-mode", "rois"}});
  EXPECT_EQ(rois(in)[0]->id, 0);
  EXPECT_TRUE(embedding_metas(in).empty());
  EXPECT_EQ(gst_video_region_of_interest_meta_get_param(rois(in)[0], GST_TACONITE_EMBEDDING_PARAMS_NAME), nullptr);
  EXPECT_EQ(embedding_metas(out).size(), 1u);
  gst_buffer_unref(out);
  gst_buffer_unref(in);
}

TEST_F(RoisTest, MessagePerFrameCarriesBoxesNormsAndEmbeddings) {
  GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "rois"}, {"post-messages", "true"}});
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  gst_harness_set_src_caps_str(h, kCaps);
  GstBuffer* in = scene_buffer();
  GST_BUFFER_PTS(in) = 2 * GST_SECOND;
  add_roi(in, "face", 100, 60, 80, 80);
  add_roi(in, "face", 10, 10, 20, 20);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT);
  ASSERT_NE(msg, nullptr);
  const GstStructure* s = gst_message_get_structure(msg);
  EXPECT_TRUE(gst_structure_has_name(s, "taconiteadaface"));
  guint64 running_time = 0;
  EXPECT_TRUE(gst_structure_get_uint64(s, "running-time", &running_time));
  EXPECT_EQ(running_time, 2 * GST_SECOND);
  const GValue* faces = gst_structure_get_value(s, "faces");
  ASSERT_TRUE(GST_VALUE_HOLDS_LIST(faces));
  ASSERT_EQ(gst_value_list_get_size(faces), 2u);
  const GstStructure* face = gst_value_get_structure(gst_value_list_get_value(faces, 0));
  gint roi_id = 0, x = 0, width = 0;
  double norm = 0;
  gst_structure_get_int(face, "roi-id", &roi_id);
  gst_structure_get_int(face, "x", &x);
  gst_structure_get_int(face, "width", &width);
  gst_structure_get_double(face, "norm", &norm);
  EXPECT_EQ(x, 100);
  EXPECT_EQ(width, 80);
  GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta_for_roi(out, roi_id);
  ASSERT_NE(meta, nullptr);
  EXPECT_DOUBLE_EQ(norm, meta->norm);
  GBytes* bytes = static_cast<GBytes*>(g_value_get_boxed(gst_structure_get_value(face, "embedding")));
  gsize size = 0;
  const void* data = g_bytes_get_data(bytes, &size);
  ASSERT_EQ(size, meta->dim * sizeof(float));
  EXPECT_EQ(0, std::memcmp(data, meta->embedding, size));  // little-endian host
  gst_message_unref(msg);
  gst_buffer_unref(out);
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
  gst_harness_teardown(h);
}

GstPadProbeReturn add_face_rois(GstPad*, GstPadProbeInfo* info, gpointer) {
  GstBuffer* buffer = gst_buffer_make_writable(GST_PAD_PROBE_INFO_BUFFER(info));
  add_roi(buffer, "face", 40, 30, 64, 64);
  add_roi(buffer, "face", 200, 100, 48, 48, 5);
  GST_PAD_PROBE_INFO_DATA(info) = buffer;
  return GST_PAD_PROBE_OK;
}

// What the element attached, by ROI id, captured on its src pad before any converter.
struct AttachedFace {
  std::vector<float> embedding;
  double norm = 0;
  std::string model, backend;
};
// Filled by the streaming thread's probe while the test thread reads it: guarded, read by copy
// (a reference into the vector would dangle when the probe's push_back reallocates).
struct AttachedFrames {
  std::mutex lock;
  std::vector<std::map<gint, AttachedFace>> frames;

  std::optional<std::map<gint, AttachedFace>> at(std::size_t index) {
    std::lock_guard<std::mutex> guard(lock);
    if (index >= frames.size()) return std::nullopt;
    return frames[index];
  }
};

GstPadProbeReturn record_attached(GstPad*, GstPadProbeInfo* info, gpointer attached) {
  std::map<gint, AttachedFace> faces;
  for (GstTaconiteEmbeddingMeta* meta : embedding_metas(GST_PAD_PROBE_INFO_BUFFER(info)))
    faces[meta->roi_id] = {std::vector<float>(meta->embedding, meta->embedding + meta->dim), meta->norm, meta->model,
                           meta->backend};
  auto* record = static_cast<AttachedFrames*>(attached);
  std::lock_guard<std::mutex> guard(record->lock);
  record->frames.push_back(std::move(faces));
  return GST_PAD_PROBE_OK;
}

// A converter after the element and the output size it produces from 320x240 (scale factor x/4).
struct Converter {
  const char* name;
  const char* launch;
  guint quarters;  // output width / 80 (and height / 60)
};

// gtest would otherwise print the struct's bytes, padding included (uninitialised under memcheck).
void PrintTo(const Converter& converter, std::ostream* out) { *out << converter.name; }

class RoisThroughConverters : public RoisTest, public ::testing::WithParamInterface<Converter> {};

// The real elements copy the embedding meta (tagless: COPY, never SCALE) and SCALE the ROI meta;
// each embedding stays intact and its roi_id still finds the face's box, rescaled.
TEST_P(RoisThroughConverters, EmbeddingMetaSurvivesIntactAndItsBoxIsScaled) {
  const Converter& converter = GetParam();
  GError* error = nullptr;
  const std::string launch =
      std::string("videotestsrc num-buffers=4 ! video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! "
                  "taconiteadaface name=t bundle=fake input-mode=rois ! ") +
      converter.launch + " ! tee name=split ! queue ! appsink name=out sync=false";
  GstElement* pipeline = gst_parse_launch(launch.c_str(), &error);
  ASSERT_NE(pipeline, nullptr) << (error ? error->message : "");
  GstElement* t = gst_bin_get_by_name(GST_BIN(pipeline), "t");
  GstPad* sink = gst_element_get_static_pad(t, "sink");
  gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, add_face_rois, nullptr, nullptr);
  gst_object_unref(sink);
  AttachedFrames attached;
  GstPad* src = gst_element_get_static_pad(t, "src");
  gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, record_attached, &attached, nullptr);
  gst_object_unref(src);
  GstElement* appsink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);

  std::size_t frames = 0;
  for (;;) {
    GstSample* sample = nullptr;
    g_signal_emit_by_name(appsink, "pull-sample", &sample);
    if (!sample) break;
    GstBuffer* buffer = gst_sample_get_buffer(sample);
    const std::optional<std::map<gint, AttachedFace>> recorded = attached.at(frames++);
    ASSERT_TRUE(recorded.has_value()) << "frame " << frames - 1 << " left the element unrecorded";
    const std::map<gint, AttachedFace>& before = *recorded;
    // The ROIs kept their ids and were scaled by the converter's factor (80,30 64x64 at 320x240).
    const auto all = rois(buffer);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0]->x, 10u * converter.quarters);
    EXPECT_EQ(all[0]->w, 16u * converter.quarters);
    EXPECT_EQ(all[1]->id, 5);
    const auto metas = embedding_metas(buffer);
    ASSERT_EQ(metas.size(), 2u) << converter.name << " dropped an embedding meta";
    ASSERT_EQ(before.size(), 2u);
    for (GstVideoRegionOfInterestMeta* roi : all) {
      GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta_for_roi(buffer, roi->id);
      ASSERT_NE(meta, nullptr) << "ROI " << roi->id << " links to its embedding after " << converter.name;
      const AttachedFace& original = before.at(roi->id);
      ASSERT_EQ(meta->dim, original.embedding.size());
      EXPECT_EQ(0, std::memcmp(meta->embedding, original.embedding.data(), meta->dim * sizeof(float)));
      EXPECT_EQ(meta->norm, original.norm);
      EXPECT_EQ(meta->model, original.model);
      EXPECT_EQ(meta->backend, original.backend);
    }
    gst_sample_unref(sample);
  }
  EXPECT_EQ(frames, 4u);
  EXPECT_EQ(counter(t, "frames-out"), 4u);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(appsink);
  gst_object_unref(t);
  gst_object_unref(pipeline);
}

INSTANTIATE_TEST_SUITE_P(
    RealElements, RoisThroughConverters,
    ::testing::Values(Converter{"videoscale up", "videoscale ! video/x-raw,width=640,height=480", 8},
                      Converter{"videoconvert", "videoconvert ! video/x-raw,format=RGB", 4},
                      Converter{"videoconvert ! videoscale down",
                                "videoconvert ! videoscale ! video/x-raw,format=NV12,width=160,height=120", 2},
                      Converter{"capsfilter resize", "videoscale ! capsfilter caps=video/x-raw,width=640,height=480", 8}),
    [](const ::testing::TestParamInfo<Converter>& info) {
      std::string name;
      for (const char* c = info.param.name; *c; ++c) name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      return name;
    });

}  // namespace
