// taconitepublish method=file through GstHarness: one JSON line per frame with faces, holding what
// the ROI metas and embedding metas carry (box, track id, landmarks, identity, aligned, status,
// norm, embedding as array or base64), nothing for frames without faces unless publish-empty,
// buffers passed through untouched, counters equal to the lines; and clear errors for bad property
// values, unusable files and MQTT settings that cannot work (checked before any connection).
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "gst_test_support.hpp"
#include "publish_frames.hpp"

namespace {

using namespace gsttest;

class PublishFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gchar* dir = g_dir_make_tmp("taconite-publish-XXXXXX", nullptr);
    ASSERT_NE(dir, nullptr);
    dir_ = dir;
    g_free(dir);
    path_ = dir_ + "/faces.jsonl";
  }
  void TearDown() override {
    if (h_) gst_harness_teardown(h_);
    g_remove(path_.c_str());
    g_rmdir(dir_.c_str());
  }
  // Pushes one frame per entry of `faces` (that many faces) and checks each comes out unchanged.
  void run(const std::vector<std::pair<std::string, std::string>>& properties, const std::vector<int>& faces) {
    auto props = properties;
    props.emplace_back("location", path_);
    props.emplace_back("stream", "door");
    h_ = publish_harness(props);
    ASSERT_NE(h_, nullptr);
    for (std::size_t i = 0; i < faces.size(); ++i) {
      GstBuffer* in = face_frame(static_cast<int>(i), faces[i]);
      ASSERT_EQ(gst_harness_push(h_, gst_buffer_ref(in)), GST_FLOW_OK);
      GstBuffer* out = gst_harness_pull(h_);
      EXPECT_EQ(out, in) << "frame " << i << ": passthrough must hand on the same buffer";
      gst_buffer_unref(out);
      gst_buffer_unref(in);
    }
  }
  std::vector<JsonObject*> documents() {
    std::vector<JsonObject*> docs;
    for (const std::string& line : file_lines(path_)) {
      JsonNode* node = parse_document(line);
      if (!node) continue;
      nodes_.push_back(node);
      docs.push_back(json_node_get_object(node));
    }
    return docs;
  }
  ~PublishFileTest() override {
    for (JsonNode* n : nodes_) json_node_unref(n);
  }

  GstHarness* h_ = nullptr;
  std::string dir_, path_;
  std::vector<JsonNode*> nodes_;
};

TEST_F(PublishFileTest, OneLinePerFrameWithFacesCarryingTheMetadata) {
  run({}, {2, 0, 1, 0, 0, 3});
  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(counter(h_->element, "messages-published"), 3u);
  EXPECT_EQ(counter(h_->element, "messages-dropped"), 0u);
  const std::vector<gint64> frames = {0, 2, 5};
  const std::vector<guint> face_counts = {2, 1, 3};
  for (std::size_t d = 0; d < docs.size(); ++d) {
    JsonObject* doc = docs[d];
    EXPECT_STREQ(json_object_get_string_member(doc, "stream"), "door");
    EXPECT_EQ(json_object_get_int_member(doc, "frame"), frames[d]);
    EXPECT_EQ(json_object_get_int_member(doc, "pts_ns"), static_cast<gint64>(frames[d] * kFrame));
    EXPECT_EQ(json_object_get_int_member(doc, "running_time_ns"), static_cast<gint64>(frames[d] * kFrame));
    EXPECT_EQ(json_object_get_int_member(doc, "width"), 320);
    EXPECT_EQ(json_object_get_int_member(doc, "height"), 240);
    EXPECT_STREQ(json_object_get_string_member(doc, "model"), "IR-18");
    EXPECT_STREQ(json_object_get_string_member(doc, "backend"), "cpu");
    const std::string utc = json_object_get_string_member(doc, "utc");
    GDateTime* parsed = g_date_time_new_from_iso8601(utc.c_str(), nullptr);
    ASSERT_NE(parsed, nullptr) << utc;
    EXPECT_LT(std::abs(g_date_time_to_unix(parsed) - g_get_real_time() / G_USEC_PER_SEC), 60) << utc;
    g_date_time_unref(parsed);
    JsonArray* faces = json_object_get_array_member(doc, "faces");
    ASSERT_EQ(json_array_get_length(faces), face_counts[d]) << "the car ROI is not a face";
    for (guint i = 0; i < face_counts[d]; ++i) {
      JsonObject* face = json_array_get_object_element(faces, i);
      JsonArray* box = json_object_get_array_member(face, "box");
      EXPECT_EQ(json_array_get_int_element(box, 0), 10 + 60 * i);
      EXPECT_EQ(json_array_get_int_element(box, 1), 20);
      EXPECT_EQ(json_array_get_int_element(box, 2), 40);
      EXPECT_EQ(json_array_get_int_element(box, 3), 40);
      EXPECT_EQ(json_object_get_int_member(face, "track_id"), 100 + i);
      JsonArray* landmarks = json_object_get_array_member(face, "landmarks");
      ASSERT_EQ(json_array_get_length(landmarks), 5u);
      JsonArray* nose = json_array_get_array_element(landmarks, 2);
      EXPECT_DOUBLE_EQ(json_array_get_double_element(nose, 0), 10 + 60 * i + 20.0);
      EXPECT_DOUBLE_EQ(json_array_get_double_element(nose, 1), 42.0);
      EXPECT_STREQ(json_object_get_string_member(face, "label"), ("person-" + std::to_string(i)).c_str());
      EXPECT_EQ(json_object_get_int_member(face, "label_id"), i);
      EXPECT_DOUBLE_EQ(json_object_get_double_member(face, "confidence"), 0.5 + i / 10.0);
      EXPECT_TRUE(json_object_get_boolean_member(face, "aligned"));
      EXPECT_STREQ(json_object_get_string_member(face, "status"), "computed");
      EXPECT_DOUBLE_EQ(json_object_get_double_member(face, "norm"), 20.0 + i);
      EXPECT_FALSE(json_object_has_member(face, "embedding")) << "embedding=none is the default";
    }
  }
}

TEST_F(PublishFileTest, ADetectorsConfidenceAndATrackersPredictionArePublished) {
  h_ = publish_harness({{"location", path_}});
  ASSERT_NE(h_, nullptr);
  GstBuffer* in = face_frame(0, 3);
  std::vector<GstVideoRegionOfInterestMeta*> faces;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(in, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    if (reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta)->roi_type == g_quark_from_string("face"))
      faces.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta));
  ASSERT_EQ(faces.size(), 3u);
  // Face 0: measured by the detector; face 1: predicted by the tracker; face 2: no detector.
  gst_video_region_of_interest_meta_add_param(
      faces[0], gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, 0.875, "fresh", G_TYPE_BOOLEAN, TRUE, nullptr));
  gst_video_region_of_interest_meta_add_param(
      faces[1], gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, 0.5, "fresh", G_TYPE_BOOLEAN, FALSE,
                                  "predicted", G_TYPE_BOOLEAN, TRUE, nullptr));
  ASSERT_EQ(gst_harness_push(h_, in), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h_));

  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 1u);
  JsonArray* published = json_object_get_array_member(docs[0], "faces");
  ASSERT_EQ(json_array_get_length(published), 3u);
  JsonObject* measured = json_object_get_object_member(json_array_get_object_element(published, 0), "detection");
  ASSERT_NE(measured, nullptr);
  EXPECT_DOUBLE_EQ(json_object_get_double_member(measured, "confidence"), 0.875);
  EXPECT_FALSE(json_object_get_boolean_member(measured, "predicted"));
  JsonObject* predicted = json_object_get_object_member(json_array_get_object_element(published, 1), "detection");
  ASSERT_NE(predicted, nullptr);
  EXPECT_TRUE(json_object_get_boolean_member(predicted, "predicted"));
  EXPECT_TRUE(json_object_get_null_member(json_array_get_object_element(published, 2), "detection"));
}

TEST_F(PublishFileTest, PublishEmptyAlsoWritesFramesWithoutFaces) {
  run({{"publish-empty", "true"}}, {0, 1, 0});
  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(counter(h_->element, "messages-published"), 3u);
  for (std::size_t d = 0; d < docs.size(); ++d) {
    EXPECT_EQ(json_object_get_int_member(docs[d], "frame"), static_cast<gint64>(d));
    EXPECT_EQ(json_array_get_length(json_object_get_array_member(docs[d], "faces")), d == 1 ? 1u : 0u);
  }
  EXPECT_TRUE(json_object_get_null_member(docs[0], "model")) << "no embedding, no model";
}

TEST_F(PublishFileTest, EmbeddingAsArrayHoldsTheMetaValues) {
  run({{"embedding", "array"}}, {2});
  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 1u);
  JsonArray* faces = json_object_get_array_member(docs[0], "faces");
  for (guint i = 0; i < 2; ++i) {
    JsonArray* values = json_object_get_array_member(json_array_get_object_element(faces, i), "embedding");
    const std::vector<float> expected = face_frame_embedding(0, static_cast<int>(i));
    ASSERT_EQ(json_array_get_length(values), expected.size());
    for (guint k = 0; k < expected.size(); ++k)
      ASSERT_EQ(static_cast<float>(json_array_get_double_element(values, k)), expected[k]) << "value " << k;
  }
}

TEST_F(PublishFileTest, EmbeddingAsBase64HoldsLittleEndianFloats) {
  run({{"embedding", "base64"}}, {1});
  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 1u);
  JsonObject* face = json_array_get_object_element(json_object_get_array_member(docs[0], "faces"), 0);
  gsize length = 0;
  guchar* bytes = g_base64_decode(json_object_get_string_member(face, "embedding"), &length);
  const std::vector<float> expected = face_frame_embedding(0, 0);
  ASSERT_EQ(length, expected.size() * 4);
  for (std::size_t k = 0; k < expected.size(); ++k) {
    guint32 bits = 0;
    std::memcpy(&bits, bytes + 4 * k, 4);
    bits = GUINT32_FROM_LE(bits);
    float value = 0.0f;
    std::memcpy(&value, &bits, 4);
    ASSERT_EQ(value, expected[k]) << "value " << k;
  }
  g_free(bytes);
}

// Hostile input: NaN and infinities in landmarks, confidence, norm and embedding must still give
// standard JSON (json-glib alone prints `nan.0`).
TEST_F(PublishFileTest, NonFiniteNumbersArePublishedAsNull) {
  h_ = publish_harness({{"location", path_}, {"embedding", "array"}});
  ASSERT_NE(h_, nullptr);
  ASSERT_EQ(gst_harness_push(h_, non_finite_face_frame(0)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h_));
  const std::vector<std::string> lines = file_lines(path_);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(strict_json_problem(lines), "");
  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 1u);
  expect_non_finite_values_null(docs[0]);
}

// facedetect leaves every ROI at id 0; an embedding meta names its ROI by id. A face ROI sharing
// the id of the embedded one must not show its embedding; the ROI carrying taconiteadaface's
// "taconite-embedding" param is the one it belongs to.
TEST_F(PublishFileTest, AnEmbeddingGoesOnlyToTheRoiItBelongsToWhenIdsAreShared) {
  const auto frame = [](bool embedded_first, bool with_param) {
    GstBuffer* buffer = gst_buffer_new_allocate(nullptr, 320 * 240 * 3, nullptr);
    GST_BUFFER_PTS(buffer) = 0;
    GstVideoRegionOfInterestMeta* a = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 10, 20, 80, 80);
    GstVideoRegionOfInterestMeta* b = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 150, 20, 20, 20);
    a->id = b->id = 0;
    const std::vector<float> embedding = face_frame_embedding(0, 0);
    GstVideoRegionOfInterestMeta* embedded = embedded_first ? a : b;
    if (with_param)
      gst_video_region_of_interest_meta_add_param(
          embedded, gst_taconite_embedding_params_new(embedding.data(), 512, 20.0, "IR-18", "cpu", TRUE));
    gst_buffer_add_taconite_embedding_meta(buffer, 0, embedding.data(), 512, 20.0, "IR-18", "cpu", TRUE);
    return buffer;
  };
  h_ = publish_harness({{"location", path_}, {"embedding", "base64"}});
  ASSERT_NE(h_, nullptr);
  for (GstBuffer* in : {frame(true, true), frame(false, true), frame(true, false)}) {
    ASSERT_EQ(gst_harness_push(h_, in), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h_));
  }
  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 3u);
  // Which face (by box width) shows the embedding in each document: 80, 20, none.
  const std::vector<gint64> expected = {80, 20, 0};
  for (std::size_t d = 0; d < docs.size(); ++d) {
    JsonArray* faces = json_object_get_array_member(docs[d], "faces");
    ASSERT_EQ(json_array_get_length(faces), 2u);
    for (guint i = 0; i < 2; ++i) {
      JsonObject* face = json_array_get_object_element(faces, i);
      const gint64 width = json_array_get_int_element(json_object_get_array_member(face, "box"), 2);
      const bool has = width == expected[d];
      EXPECT_EQ(json_object_has_member(face, "embedding"), has) << "document " << d << ", face " << width;
      EXPECT_EQ(json_object_get_null_member(face, "status"), !has) << "document " << d << ", face " << width;
    }
  }
}

// The whole chain: taconiteadaface embeds the large face only (min-face-size); the small one,
// which facedetect gave the same id 0, is published without an embedding and with status null.
TEST_F(PublishFileTest, AFaceTaconiteadafaceDidNotSelectIsPublishedWithoutAnEmbedding) {
  std::shared_ptr<FakeEngineState> engine = install_fake_engine();
  struct Uninstall {  // also when an assertion ends the test early: the harness goes first
    GstHarness*& h;
    ~Uninstall() {
      if (h) gst_harness_teardown(std::exchange(h, nullptr));
      uninstall_fake_engine();
    }
  } uninstall{h_};
  const std::string line = "taconiteadaface bundle=fake input-mode=rois min-face-size=30 ! taconitepublish "
                           "embedding=base64 location=\"" + path_ + "\"";
  h_ = gst_harness_new_parse(line.c_str());
  ASSERT_NE(h_, nullptr);
  gst_harness_set_src_caps_str(h_, kPublishCaps);
  for (bool small_first : {false, true}) {
    GstBuffer* in = gst_buffer_new_allocate(nullptr, 320 * 240 * 3, nullptr);
    gst_buffer_memset(in, 0, 90, gst_buffer_get_size(in));
    GST_BUFFER_PTS(in) = 0;
    const auto add = [&](guint x, guint side) { gst_buffer_add_video_region_of_interest_meta(in, "face", x, 20, side, side)->id = 0; };
    if (small_first) add(200, 20);
    add(10, 80);
    if (!small_first) add(200, 20);
    ASSERT_EQ(gst_harness_push(h_, in), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h_));
  }
  EXPECT_EQ(engine->faces_seen(), 2u) << "one face per frame embedded";
  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 2u);
  for (JsonObject* doc : docs) {
    JsonArray* faces = json_object_get_array_member(doc, "faces");
    ASSERT_EQ(json_array_get_length(faces), 2u);
    std::set<gint64> ids;
    for (guint i = 0; i < 2; ++i) {
      JsonObject* face = json_array_get_object_element(faces, i);
      ids.insert(json_object_get_int_member(face, "roi_id"));
      const bool large = json_array_get_int_element(json_object_get_array_member(face, "box"), 2) == 80;
      EXPECT_EQ(json_object_has_member(face, "embedding"), large);
      EXPECT_EQ(json_object_get_null_member(face, "status"), !large);
      EXPECT_EQ(json_object_get_null_member(face, "norm"), !large);
    }
    EXPECT_EQ(ids.size(), 2u) << "taconiteadaface gives every face ROI an id of its own";
  }
}

// Properties flagged GST_PARAM_MUTABLE_READY are refused while playing (they take effect at start).
TEST_F(PublishFileTest, ReadyOnlyPropertiesAreNotChangedWhilePlaying) {
  run({}, {1});
  g_object_set(h_->element, "location", "/nonexistent/elsewhere.jsonl", "stream", "other", nullptr);
  gchar* location = nullptr;
  gchar* stream = nullptr;
  g_object_get(h_->element, "location", &location, "stream", &stream, nullptr);
  EXPECT_EQ(std::string(location), path_);
  EXPECT_STREQ(stream, "door");
  g_free(location);
  g_free(stream);
}

TEST_F(PublishFileTest, WriteFailureIsAnErrorNamingTheFile) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "/dev/full not writable here";
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  g_object_set(element, "location", "/dev/full", nullptr);
  h_ = gst_harness_new_with_element(element, "sink", "src");
  gst_object_unref(element);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h_->element, bus);
  gst_harness_set_src_caps_str(h_, kPublishCaps);
  EXPECT_EQ(gst_harness_push(h_, face_frame(0, 1)), GST_FLOW_ERROR);
  GstMessage* error = pop_error(bus);
  ASSERT_NE(error, nullptr);
  GError* gerror = nullptr;
  gst_message_parse_error(error, &gerror, nullptr);
  EXPECT_NE(std::string(gerror->message).find("cannot write to '/dev/full'"), std::string::npos) << gerror->message;
  g_error_free(gerror);
  gst_message_unref(error);
  gst_element_set_bus(h_->element, nullptr);
  gst_object_unref(bus);
}

// Starting (NULL -> PAUSED) with these properties fails with an error whose message holds `expected`.
void expect_start_error(const std::vector<std::pair<std::string, std::string>>& properties, const std::string& expected) {
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  for (const auto& [name, value] : properties) gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  const StartFailure failure = start_paused(element);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(failure.domain, GST_RESOURCE_ERROR);
  EXPECT_NE(failure.message.find(expected), std::string::npos) << "message: " << failure.message;
}

TEST(PublishErrorsTest, UnwritableLocationNamesTheFile) {
  expect_start_error({{"location", "/nonexistent-dir/faces.jsonl"}},
                     "cannot open '/nonexistent-dir/faces.jsonl' for writing: No such file or directory");
}

TEST(PublishErrorsTest, MqttSettingsThatCannotWorkAreRefusedBeforeConnecting) {
  expect_start_error({{"method", "mqtt"}, {"topic", "cameras/#"}}, "MQTT topic 'cameras/#' is not a valid topic");
  expect_start_error({{"method", "mqtt"}, {"topic", ""}}, "MQTT topic '' is not a valid topic");
  expect_start_error({{"method", "mqtt"}, {"host", ""}}, "needs a broker 'host'");
  expect_start_error({{"method", "mqtt"}, {"credentials", "/nonexistent/credentials"}},
                     "cannot read the credentials file");
  expect_start_error({{"method", "mqtt"}, {"tls-ca", "/nonexistent/ca.pem"}},
                     "cannot read TLS file tls-ca '/nonexistent/ca.pem': does not exist");
  expect_start_error({{"method", "mqtt"}, {"tls-key", "/nonexistent/key.pem"}}, "TLS needs tls-ca");
  expect_start_error({{"method", "mqtt"}, {"tls-ca", "/dev/null"}, {"tls-cert", "/dev/null"}},
                     "tls-cert and tls-key go together");

  gchar* path = nullptr;
  const gint fd = g_file_open_tmp("taconite-credentials-XXXXXX", &path, nullptr);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "\nsecret\n", 8), 8);
  close(fd);
  expect_start_error({{"method", "mqtt"}, {"credentials", path}}, "has no user name on its first line");
  g_remove(path);
  g_free(path);
}

// A FIFO where a file is meant must not hang the state change. Should it hang anyway (the bug),
// this opens the FIFO's other end after a generous hang guard, so the test fails instead of
// hanging: held open until the end for a blocked writer (which must not get SIGPIPE), closed at
// once for a blocked reader (which then reads end-of-file).
class FifoHangGuard {
 public:
  FifoHangGuard(std::string path, bool writer_blocks) : path_(std::move(path)) {
    thread_ = std::thread([this, writer_blocks] {
      std::unique_lock<std::mutex> lk(lock_);
      if (changed_.wait_for(lk, std::chrono::seconds(60), [&] { return done_; })) return;
      fd_ = open(path_.c_str(), O_RDWR | O_NONBLOCK);  // O_RDWR on a FIFO never blocks (Linux)
      if (!writer_blocks && fd_ >= 0) close(std::exchange(fd_, -1));
    });
  }
  ~FifoHangGuard() {
    {
      std::lock_guard<std::mutex> guard(lock_);
      done_ = true;
    }
    changed_.notify_all();
    thread_.join();
    if (fd_ >= 0) close(fd_);
  }

 private:
  std::string path_;
  std::mutex lock_;
  std::condition_variable changed_;
  bool done_ = false;
  int fd_ = -1;
  std::thread thread_;
};

// A temporary directory holding a FIFO named "fifo".
struct FifoDir {
  FifoDir() {
    gchar* d = g_dir_make_tmp("taconite-fifo-XXXXXX", nullptr);
    dir = d ? d : "";
    g_free(d);
    fifo = dir + "/fifo";
    ok = !dir.empty() && mkfifo(fifo.c_str(), 0600) == 0;
  }
  ~FifoDir() {
    g_remove(fifo.c_str());
    g_rmdir(dir.c_str());
  }
  std::string dir, fifo;
  bool ok = false;
};

TEST(PublishErrorsTest, AFifoWithoutAReaderAsLocationIsAnErrorNotAHang) {
  FifoDir d;
  ASSERT_TRUE(d.ok);
  FifoHangGuard guard(d.fifo, true);
  expect_start_error({{"location", d.fifo}}, "cannot open '" + d.fifo + "' for writing: it is a FIFO (or socket) with no reader");
}

TEST(PublishErrorsTest, AFifoWithAReaderAsLocationGetsTheDocuments) {
  FifoDir d;
  ASSERT_TRUE(d.ok);
  const int reader = open(d.fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  GstHarness* h = publish_harness({{"location", d.fifo}});
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(gst_harness_push(h, face_frame(0, 1)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  std::string received(1 << 16, '\0');
  const ssize_t got = read(reader, received.data(), received.size());
  ASSERT_GT(got, 0);
  received.resize(static_cast<std::size_t>(got));
  ASSERT_EQ(received.back(), '\n');
  JsonNode* node = parse_document(received.substr(0, received.size() - 1));
  EXPECT_NE(node, nullptr);
  if (node) json_node_unref(node);
  gst_harness_teardown(h);
  close(reader);
}

TEST(PublishErrorsTest, FifosAsCredentialsOrTlsFilesAreRefusedNotWaitedOn) {
  FifoDir d;
  ASSERT_TRUE(d.ok);
  const std::string pem = d.dir + "/ca.pem";
  std::ofstream(pem) << "not read\n";
  const std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, std::string>> cases = {
      {{{"method", "mqtt"}, {"credentials", d.fifo}}, "cannot read the credentials file '" + d.fifo + "'"},
      {{{"method", "mqtt"}, {"tls-ca", d.fifo}}, "cannot read TLS file tls-ca '" + d.fifo + "'"},
      {{{"method", "mqtt"}, {"tls-ca", pem}, {"tls-cert", pem}, {"tls-key", d.fifo}},
       "cannot read TLS file tls-key '" + d.fifo + "'"},
  };
  for (const auto& [properties, expected] : cases) {
    FifoHangGuard guard(d.fifo, false);
    expect_start_error(properties, expected + ": is a FIFO, not a regular file");
  }
  g_remove(pem.c_str());
}

TEST(PublishErrorsTest, AnOversizedCredentialsFileIsRefusedWithoutReadingIt) {
  gchar* path = nullptr;
  const gint fd = g_file_open_tmp("taconite-credentials-XXXXXX", &path, nullptr);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 10 * 1024 * 1024), 0);
  close(fd);
  expect_start_error({{"method", "mqtt"}, {"credentials", path}}, "is 10485760 bytes, more than 65536");
  g_remove(path);
  g_free(path);
}

// {stream} is one topic level: a name with '/' would add levels, '+' and '#' are wildcards.
TEST(PublishErrorsTest, AStreamNameThatIsNotOneTopicLevelIsRefusedForMqtt) {
  for (const char* stream : {"door/1", "door+", "#"})
    expect_start_error({{"method", "mqtt"}, {"stream", stream}},
                       std::string("stream name '") + stream + "' cannot go into the MQTT topic 'taconite/{stream}/faces'");
}

TEST(PublishErrorsTest, UnknownEnumValuesAreRefusedByTheParser) {
  for (const char* property : {"method=kafka", "embedding=float16"}) {
    GError* error = nullptr;
    const std::string line = std::string("fakesrc ! taconitepublish ") + property + " ! fakesink";
    GstElement* pipeline = gst_parse_launch_full(line.c_str(), nullptr, GST_PARSE_FLAG_FATAL_ERRORS, &error);
    EXPECT_NE(error, nullptr) << property << " was accepted";
    if (error) {
      EXPECT_EQ(error->code, GST_PARSE_ERROR_COULD_NOT_SET_PROPERTY) << property << ": " << error->message;
      g_error_free(error);
    }
    if (pipeline) gst_object_unref(pipeline);
  }
}

// GLib refuses out-of-range numbers (with a warning) and keeps the valid value.
TEST(PublishErrorsTest, OutOfRangeNumbersKeepTheValidValue) {
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  for (const auto& [name, value] : {std::pair{"qos", "2"}, {"port", "0"}, {"port", "65536"}, {"max-pending", "0"}})
    gst_util_set_object_arg(G_OBJECT(element), name, value);
  gint qos = -1, port = -1;
  guint max_pending = 0;
  g_object_get(element, "qos", &qos, "port", &port, "max-pending", &max_pending, nullptr);
  EXPECT_EQ(qos, 1);
  EXPECT_EQ(port, 1883);
  EXPECT_EQ(max_pending, 1000u);
  gst_object_unref(element);
}

}  // namespace

// Issue 23: every face says whether its identity is decided (taconiteidentify's label_state), null
// without identification.
TEST_F(PublishFileTest, LabelStateIsPublishedAndNullWithoutIdentification) {
  h_ = publish_harness({{"location", path_}});
  ASSERT_NE(h_, nullptr);
  GstBuffer* in = face_frame(0, 4);
  std::vector<GstVideoRegionOfInterestMeta*> faces;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(in, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    if (reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta)->roi_type == g_quark_from_string("face"))
      faces.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta));
  ASSERT_EQ(faces.size(), 4u);
  const char* states[] = {"pending", "known", "unknown"};
  for (std::size_t i = 0; i < 3; ++i) {
    GstStructure* identity = gst_video_region_of_interest_meta_get_param(faces[i], "identity");
    ASSERT_NE(identity, nullptr);
    if (i == 0) gst_structure_remove_fields(identity, "label", "label_id", "confidence", nullptr);
    gst_structure_set(identity, "label_state", G_TYPE_STRING, states[i], nullptr);
  }
  for (GList* l = faces[3]->params; l; l = l->next)
    if (gst_structure_has_name(static_cast<GstStructure*>(l->data), "identity")) {
      gst_structure_free(static_cast<GstStructure*>(l->data));
      faces[3]->params = g_list_delete_link(faces[3]->params, l);
      break;
    }
  ASSERT_EQ(gst_harness_push(h_, in), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h_));

  const std::vector<JsonObject*> docs = documents();
  ASSERT_EQ(docs.size(), 1u);
  JsonArray* published = json_object_get_array_member(docs[0], "faces");
  ASSERT_EQ(json_array_get_length(published), 4u);
  for (guint i = 0; i < 3; ++i)
    EXPECT_STREQ(json_object_get_string_member(json_array_get_object_element(published, i), "label_state"), states[i]);
  EXPECT_FALSE(json_object_has_member(json_array_get_object_element(published, 0), "label"));
  EXPECT_TRUE(json_object_get_null_member(json_array_get_object_element(published, 3), "label_state"));
}
