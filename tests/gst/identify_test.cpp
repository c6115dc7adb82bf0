// taconiteidentify on real pipelines: the demo video (python3-skimage's astronaut, panned and
// zoomed) and opencv-doc's messi5.jpg through facedetect -> taconitelandmarks -> taconitetrack ->
// taconiteadaface (the IR-tiny test bundle) -> taconiteidentify, with galleries enrolled by the
// real taconite-gallery CLI from the still photos.
//
// Honest scope: the test bundle's weights are synthetic, so its embeddings are meaningless as
// identities ACROSS different photos of a person. What holds for them, and all these tests assert,
// is that the same face (the enrolled photo, seen again through pan, zoom, detection and alignment)
// matches itself far above the threshold, and a different face (messi vs the astronaut) does not.
#include <fcntl.h>
#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/taconite/gsttaconiteroi.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gallery_store.hpp"
#include "gallery_watcher.hpp"
#include "model_fingerprint.hpp"
#include "gst_test_support.hpp"
#include "roi_params.hpp"

namespace {

namespace fs = std::filesystem;
using taconite::gallery::GalleryStore;

constexpr int kFps = 10;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// What a pipeline produced: per buffer, the identity label (or "" while voting) of each track.
struct Observed {
  std::mutex lock;
  int buffers = 0;
  std::vector<std::map<gint64, std::string>> labels;  // per buffer: track id -> label
  std::vector<gint64> label_ids;                      // every label_id written
  std::vector<std::vector<float>> first_embedding;    // the first computed embedding seen
  std::function<void(const std::vector<float>&)> on_first_embedding;
};

GstPadProbeReturn observe(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* o = static_cast<Observed*>(data);
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  std::map<gint64, std::string> labels;
  std::vector<gint64> ids;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    GstStructure* identity = gst_video_region_of_interest_meta_get_param(roi, "identity");
    GstStructure* track = gst_video_region_of_interest_meta_get_param(roi, "object_id");
    gint id = -1;
    if (!track || !gst_structure_get_int(track, "id", &id)) continue;
    const gchar* label = identity ? gst_structure_get_string(identity, "label") : nullptr;  // none: voting
    labels[id] = label ? label : "";
    gint label_id = 0;
    if (identity && gst_structure_get_int(identity, "label_id", &label_id)) ids.push_back(label_id);
  }
  std::function<void(const std::vector<float>&)> callback;
  std::vector<float> embedding;
  {
    std::lock_guard guard(o->lock);
    ++o->buffers;
    o->labels.push_back(labels);
    o->label_ids.insert(o->label_ids.end(), ids.begin(), ids.end());
    if (o->first_embedding.empty())
      for (GstTaconiteEmbeddingMeta* e : gsttest::embedding_metas(buffer))
        if (e->dim > 0 && e->roi_id >= 0) {
          o->first_embedding.emplace_back(e->embedding, e->embedding + e->dim);
          embedding = o->first_embedding.back();
          callback = o->on_first_embedding;
          break;
        }
  }
  if (callback) callback(embedding);
  return GST_PAD_PROBE_OK;
}

// The demo's moving window (pipelines/faces_to_jsonl.py): the crop shrinks by up to 25 % and pans.
struct Window {
  GstElement* box;
  int width, height, frames;
};

GstPadProbeReturn move_window(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* w = static_cast<Window*>(data);
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  const double frame = GST_BUFFER_PTS_IS_VALID(buffer) ? double(GST_BUFFER_PTS(buffer) / (GST_SECOND / kFps)) : 0.0;
  const double t = std::min(frame / std::max(w->frames, 1), 1.0);
  const double keep = 1.0 - 0.25 * t;
  const int cw = int(w->width * keep), ch = int(w->height * keep);
  const int left = int((w->width - cw) * (0.5 + 0.5 * (t - 0.5)));
  const int top = int((w->height - ch) * (0.5 - 0.3 * (t - 0.5)));
  g_object_set(w->box, "left", left, "right", w->width - cw - left, "top", top, "bottom", w->height - ch - top,
               nullptr);
  return GST_PAD_PROBE_OK;
}

struct PipelineRun {
  std::vector<GstStructure*> identity_messages;
  std::vector<std::string> warnings;
  std::string error;
  ~PipelineRun() {
    for (GstStructure* s : identity_messages) gst_structure_free(s);
  }
  std::vector<std::string> names_for(gint64 track) const {
    std::vector<std::string> names;
    for (GstStructure* s : identity_messages) {
      gint64 id = 0;
      if (gst_structure_get_int64(s, "track-id", &id) && id == track)
        names.push_back(gst_structure_get_string(s, "name"));
    }
    return names;
  }
};

// The stock front end by default, re-embedding every `reinfer_interval` frames; yunet_front() is
// the recommended one.
struct FrontEnd {
  std::string detect = "facedetect display=false ! taconitelandmarks";
  std::string reinfer;  // empty: reinfer-interval=N
};
FrontEnd yunet_front() {
  return {"taconitedetect model=\"" + env("TACONITE_YUNET_MODEL") + "\" interval=3", "reinfer-mode=best"};
}

class IdentifyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    bundle_ = gsttest::test_bundle();
    astronaut_ = env("TACONITE_TEST_ASTRONAUT");
    messi_ = env("TACONITE_TEST_MESSI");
    cli_ = env("TACONITE_GALLERY_CLI");
    GstElementFactory* facedetect = gst_element_factory_find("facedetect");
    if (bundle_.empty() || cli_.empty() || !fs::exists(astronaut_) || !fs::exists(messi_) || !facedetect) {
      skip_ = "needs the test bundle, taconite-gallery, astronaut.png, messi5.jpg and facedetect";
      return;
    }
    gst_object_unref(facedetect);
    dir_ = fs::temp_directory_path() / ("taconite-identify-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // astronaut.db: the astronaut; both.db: the astronaut and messi; empty.db: nobody.
    ASSERT_EQ(cli({"create", gallery("astronaut"), "--bundle", bundle_}), 0);
    ASSERT_EQ(cli({"enroll", gallery("astronaut"), "--bundle", bundle_, "--name", "astronaut", astronaut_}), 0);
    fs::copy_file(gallery("astronaut"), gallery("both"));
    ASSERT_EQ(cli({"enroll", gallery("both"), "--bundle", bundle_, "--name", "messi", "--largest", messi_}), 0);
    ASSERT_EQ(cli({"create", gallery("empty"), "--bundle", bundle_}), 0);
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  static std::string gallery(const std::string& name) { return (dir_ / (name + ".db")).string(); }
  static int cli(const std::vector<std::string>& args) {
    std::string command = "'" + cli_ + "'";
    for (const std::string& a : args) command += " '" + a + "'";
    return std::system((command + " >/dev/null 2>&1").c_str());
  }

  // Runs `frames` frames of `photo` (moving window) through the stock front end and
  // taconiteidentify with `identify_props`; the probe observes the identified buffers.
  static void run(const std::string& photo, int frames, const std::string& identify_props, Observed& observed,
                  PipelineRun& result, int reinfer_interval = 1, const FrontEnd& front = FrontEnd()) {
    const std::string description =
        "filesrc location=\"" + photo +
        "\" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! imagefreeze "
        "num-buffers=" +
        std::to_string(frames) + " ! video/x-raw,framerate=" + std::to_string(kFps) +
        "/1 ! videobox name=window ! videoscale ! video/x-raw,width=480,height=480,pixel-aspect-ratio=1/1 ! "
        "videoconvert ! " + front.detect + " ! taconitetrack ! taconiteadaface bundle=\"" + bundle_ +
        "\" backend=" + gsttest::test_backend() + " input-mode=rois " +
        (front.reinfer.empty() ? "reinfer-interval=" + std::to_string(reinfer_interval) : front.reinfer) +
        " ! taconiteidentify name=identify " +
        identify_props + " ! fakesink sync=false";
    GError* error = nullptr;
    GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
    ASSERT_NE(pipeline, nullptr) << (error ? error->message : "");
    GstElement* identify = gst_bin_get_by_name(GST_BIN(pipeline), "identify");
    GstPad* src = gst_element_get_static_pad(identify, "src");
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, observe, &observed, nullptr);
    gst_object_unref(src);
    gst_object_unref(identify);
    GstElement* box = gst_bin_get_by_name(GST_BIN(pipeline), "window");
    Window window{box, 0, 0, frames};
    const cv_size size = image_size(photo);
    window.width = size.width;
    window.height = size.height;
    GstPad* box_sink = gst_element_get_static_pad(box, "sink");
    gst_pad_add_probe(box_sink, GST_PAD_PROBE_TYPE_BUFFER, move_window, &window, nullptr);
    gst_object_unref(box_sink);

    GstBus* bus = gst_element_get_bus(pipeline);
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    for (bool done = false; !done;) {
      // Hang guard only (the slowest run takes ~20 s on 2 cores).
      GstMessage* m = gst_bus_timed_pop_filtered(
          bus, 600 * GST_SECOND,
          static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING | GST_MESSAGE_ELEMENT));
      if (!m) {
        result.error = "timed out";
        break;
      }
      GError* e = nullptr;
      gchar* debug = nullptr;
      switch (GST_MESSAGE_TYPE(m)) {
        case GST_MESSAGE_EOS: done = true; break;
        case GST_MESSAGE_ERROR:
          gst_message_parse_error(m, &e, &debug);
          result.error = std::string(e->message) + " | " + (debug ? debug : "");
          done = true;
          break;
        case GST_MESSAGE_WARNING:
          gst_message_parse_warning(m, &e, &debug);
          result.warnings.push_back(std::string(e->message) + " | " + (debug ? debug : ""));
          break;
        default:
          if (gst_message_has_name(m, "taconite-identity"))
            result.identity_messages.push_back(gst_structure_copy(gst_message_get_structure(m)));
          break;
      }
      if (e) g_error_free(e);
      g_free(debug);
      gst_message_unref(m);
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(box);
    gst_object_unref(pipeline);
  }

  struct cv_size {
    int width = 0, height = 0;
  };
  static cv_size image_size(const std::string& photo) {
    // Both photos are known: their sizes set the moving window's range.
    return photo == astronaut_ ? cv_size{512, 512} : cv_size{548, 342};
  }

  // The track holding most labelled buffers.
  static gint64 main_track(const Observed& o) {
    std::map<gint64, int> count;
    for (const auto& frame : o.labels)
      for (const auto& [track, label] : frame) ++count[track];
    gint64 best = -1;
    int most = 0;
    for (const auto& [track, n] : count)
      if (n > most) best = track, most = n;
    return best;
  }

  // Plays the astronaut for 40 frames on the gallery `live` with `properties`; the first embedding
  // the pipeline computes is enrolled as "astronaut" from another thread and connection meanwhile.
  // Her track must end named from the changed gallery, with every buffer through.
  void expect_enrollment_while_playing_arrives(const std::string& live, const std::string& properties) {
    Observed observed;
    std::thread writer;
    std::string write_error;
    observed.on_first_embedding = [&](const std::vector<float>& embedding) {
      writer = std::thread([&, embedding] {
        auto store = GalleryStore::open(live, GalleryStore::Access::ReadWrite);
        if (!store) {
          write_error = store.error().message;
          return;
        }
        std::vector<taconite::gallery::NewTemplate> t = {{embedding, 0.0, "live frame", 0}};
        auto id = store.value().enroll("astronaut", "", t);
        if (!id) write_error = id.error().message;
      });
    };
    PipelineRun result;
    run(astronaut_, 40, "gallery=\"" + live + "\" " + properties, observed, result);
    if (writer.joinable()) writer.join();
    ASSERT_EQ(write_error, "");
    ASSERT_EQ(result.error, "");
    EXPECT_EQ(observed.buffers, 40);  // nothing lost while the gallery changed
    const gint64 track = main_track(observed);
    ASSERT_GE(track, 0);
    // The track was named from the gallery as it was, then the enrolled identity was picked up.
    const std::vector<std::string> names = result.names_for(track);
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names.back(), "astronaut");
    EXPECT_EQ(observed.labels.back().at(track), "astronaut");
  }

  static inline std::string bundle_, astronaut_, messi_, cli_, skip_;
  static inline fs::path dir_;
};

TEST_F(IdentifyTest, DemoVideoAstronautIsLabelledAfterItsVoteSettles) {
  Observed observed;
  PipelineRun result;
  run(astronaut_, 30, "gallery=\"" + gallery("both") + "\" bundle=\"" + bundle_ + "\"", observed, result, 2);
  ASSERT_EQ(result.error, "");
  EXPECT_EQ(observed.buffers, 30);
  const gint64 track = main_track(observed);
  ASSERT_GE(track, 0) << "no tracked face";
  // Once the track's label appears it is "astronaut" on every later frame showing the track.
  int labelled = 0;
  bool settled = false;
  for (const auto& frame : observed.labels) {
    const auto it = frame.find(track);
    if (it == frame.end()) continue;
    if (!it->second.empty()) settled = true;
    if (settled) {
      EXPECT_EQ(it->second, "astronaut");
      ++labelled;
    }
  }
  EXPECT_GE(labelled, 10);
  EXPECT_EQ(result.names_for(track), std::vector<std::string>{"astronaut"});  // one message per track and identity
  for (GstStructure* s : result.identity_messages) {
    double similarity = 0;
    guint64 running_time = 0;
    EXPECT_TRUE(gst_structure_get_double(s, "similarity", &similarity));
    EXPECT_GT(similarity, 0.4);
    EXPECT_TRUE(gst_structure_get_uint64(s, "running-time", &running_time));
    EXPECT_NE(gst_structure_get_string(s, "stream"), nullptr);
  }
}

// The same run on a PostgreSQL gallery: tests/gallery/test_gallery_postgres.py starts a server,
// makes an empty database and runs this test with TACONITE_TEST_PG_GALLERY (its connection
// string) and the password file in PGPASSFILE; the gallery is both.db copied into it.
TEST_F(IdentifyTest, PostgresGalleryNamesTheAstronautAsSqliteDoes) {
  const std::string database = env("TACONITE_TEST_PG_GALLERY");
  if (database.empty()) GTEST_SKIP() << "needs a PostgreSQL server (run by the gallery-postgres test)";
  ASSERT_EQ(cli({"copy", gallery("both"), database}), 0);
  Observed observed;
  PipelineRun result;
  run(astronaut_, 30, "gallery=\"" + database + "\" bundle=\"" + bundle_ + "\"", observed, result, 2);
  ASSERT_EQ(result.error, "");
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();
  const gint64 track = main_track(observed);
  ASSERT_GE(track, 0) << "no tracked face";
  EXPECT_EQ(result.names_for(track), std::vector<std::string>{"astronaut"});
  int labelled = 0;
  for (const auto& frame : observed.labels)
    if (auto it = frame.find(track); it != frame.end() && !it->second.empty()) {
      EXPECT_EQ(it->second, "astronaut");
      ++labelled;
    }
  EXPECT_GE(labelled, 10);
}

// An enrolment committed by another connection reaches the running pipeline through LISTEN/NOTIFY:
// poll-interval=0 turns the poll off, so only the notification can bring it.
TEST_F(IdentifyTest, PostgresGalleryEnrollmentWhilePlayingArrivesThroughNotify) {
  const std::string live = env("TACONITE_TEST_PG_LIVE_GALLERY");
  if (live.empty()) GTEST_SKIP() << "needs a PostgreSQL server (run by the gallery-postgres test)";
  ASSERT_EQ(cli({"copy", gallery("empty"), live}), 0);
  expect_enrollment_while_playing_arrives(live, "poll-interval=0");
}

TEST_F(IdentifyTest, FaceNotInTheGalleryIsUnknown) {
  Observed observed;
  PipelineRun result;
  run(messi_, 16, "gallery=\"" + gallery("astronaut") + "\"", observed, result);
  ASSERT_EQ(result.error, "");
  const gint64 track = main_track(observed);
  ASSERT_GE(track, 0) << "no tracked face";
  int unknown = 0;
  for (const auto& frame : observed.labels)
    if (auto it = frame.find(track); it != frame.end() && !it->second.empty()) {
      EXPECT_EQ(it->second, "unknown");
      ++unknown;
    }
  EXPECT_GE(unknown, 5);
  for (gint64 id : observed.label_ids) EXPECT_EQ(id, -1);
  EXPECT_EQ(result.names_for(track), std::vector<std::string>{"unknown"});
}

TEST_F(IdentifyTest, EmptyGalleryWarnsOnceAndEveryFaceIsUnknown) {
  Observed observed;
  PipelineRun result;
  run(astronaut_, 8, "gallery=\"" + gallery("empty") + "\" min-votes=1", observed, result);
  ASSERT_EQ(result.error, "");
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("is empty"), std::string::npos) << result.warnings[0];
  int labelled = 0;
  for (const auto& frame : observed.labels)
    for (const auto& [track, label] : frame)
      if (!label.empty()) {
        EXPECT_EQ(label, "unknown");
        ++labelled;
      }
  EXPECT_GT(labelled, 0);
}

TEST_F(IdentifyTest, EnrollmentWhilePlayingIsPickedUpWithoutStoppingVideo) {
  const std::string live = gallery("live");
  fs::copy_file(gallery("empty"), live);
  // A WAL writer next to the element's reader.
  expect_enrollment_while_playing_arrives(live, "poll-interval=50");
}

TEST_F(IdentifyTest, ReloadSignalIsAccepted) {
  GstElement* identify = gst_element_factory_make("taconiteidentify", nullptr);
  g_object_set(identify, "gallery", gallery("both").c_str(), "poll-interval", 0u, nullptr);
  ASSERT_EQ(gst_element_set_state(identify, GST_STATE_PAUSED), GST_STATE_CHANGE_SUCCESS);
  g_signal_emit_by_name(identify, "reload");
  gst_element_set_state(identify, GST_STATE_NULL);
  g_signal_emit_by_name(identify, "reload");  // stopped: nothing to reload, no crash
  gst_object_unref(identify);
}

TEST_F(IdentifyTest, FingerprintMismatchFailsTheStartNamingTheGallery) {
  // Another model: the same files but a different manifest (its hash is part of the fingerprint).
  const fs::path other = dir_ / "other-bundle";
  fs::create_directories(other);
  for (const char* f : {"tensors.txt", "tensors.bin"})
    if (!fs::exists(other / f)) fs::create_symlink(fs::path(bundle_) / f, other / f);
  std::ifstream in(fs::path(bundle_) / "manifest.txt");
  std::ofstream(other / "manifest.txt") << in.rdbuf() << "\n# another model\n";
  GstElement* identify = gst_element_factory_make("taconiteidentify", nullptr);
  g_object_set(identify, "gallery", gallery("both").c_str(), "bundle", other.c_str(), nullptr);
  const gsttest::StartFailure failure = gsttest::start_paused(identify);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.debug.find(gallery("both")), std::string::npos) << failure.debug;
  EXPECT_NE(failure.debug.find("another model"), std::string::npos) << failure.debug;
}

TEST_F(IdentifyTest, CorruptOrMissingGalleryFailsTheStartNamingTheFile) {
  const std::string corrupt = (dir_ / "corrupt.db").string();
  std::ofstream(corrupt) << std::string(8192, '\x5a');
  for (const std::string& file : {corrupt, (dir_ / "missing.db").string()}) {
    GstElement* identify = gst_element_factory_make("taconiteidentify", nullptr);
    g_object_set(identify, "gallery", file.c_str(), nullptr);
    const gsttest::StartFailure failure = gsttest::start_paused(identify);
    EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
    EXPECT_NE(failure.message.find(file), std::string::npos) << failure.message;
  }
}

TEST_F(IdentifyTest, EmbeddingsOfAnotherModelNameAreAnError) {
  const fs::path foreign = dir_ / "ir18.db";
  fs::remove(foreign);
  ASSERT_TRUE(GalleryStore::create(foreign, {std::string(64, 'f'), "IR-18"}, 512).ok());
  GstHarness* h = gst_harness_new_parse(("taconiteidentify gallery=\"" + foreign.string() + "\"").c_str());
  gst_harness_set_src_caps_str(h, gsttest::kRgbCaps);
  GstBuffer* buffer = gsttest::stream_frame(0);
  GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 10, 10, 50, 50);
  std::vector<float> unit(512, 0.0f);
  unit[0] = 1.0f;
  gst_buffer_add_taconite_embedding_meta(buffer, roi->id, unit.data(), 512, 20.0, "IR-tiny", "cpu", TRUE);
  EXPECT_EQ(gst_harness_push(h, buffer), GST_FLOW_ERROR);
  gst_harness_teardown(h);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// taconiteidentify in a GstHarness with synthetic embeddings on galleries written with
// GalleryStore: the hostile-input and gallery-replacement cases of issue 20 (no bundle needed).

namespace {

namespace gallery = taconite::gallery;
constexpr int kDim = 8;
const gallery::ModelFingerprint kModel{std::string(64, 'e'), "IR-tiny"};

std::vector<float> unit_axis(int i) {
  std::vector<float> v(kDim, 0.0f);
  v[std::size_t(i)] = 1.0f;
  return v;
}

struct Face {
  Face(std::optional<int> track_id, std::vector<float> values, bool reused = false, std::optional<gint> id = {},
       std::optional<double> score = {})
      : track(track_id), embedding(std::move(values)), cached(reused), roi_id(id), quality(score) {}
  std::optional<int> track;
  std::vector<float> embedding;
  bool cached;
  std::optional<gint> roi_id;  // overrides the ROI's id (facedetect leaves them all at 0)
  std::optional<double> quality;  // taconiteadaface's best-shot "quality" param (embedding-score)
  std::string uid;  // taconitetrack's, beside the object_id id: the tracker owns the track; "": none
  // This face with taconitetrack's uid `u`.
  Face owned_by_tracker(std::string u) const {
    Face f = *this;
    f.uid = std::move(u);
    return f;
  }
};

GstBuffer* faces_frame(int index, const std::vector<Face>& faces, const char* model = "IR-tiny") {
  GstBuffer* buffer = gsttest::stream_frame(index);
  for (std::size_t i = 0; i < faces.size(); ++i) {
    const Face& f = faces[i];
    GstVideoRegionOfInterestMeta* roi =
        gst_buffer_add_video_region_of_interest_meta(buffer, "face", guint(10 + 30 * i), 10, 20, 20);
    if (f.track) {
      GstStructure* object_id = gst_structure_new("object_id", "id", G_TYPE_INT, *f.track, nullptr);
      if (!f.uid.empty()) gst_structure_set(object_id, "uid", G_TYPE_STRING, f.uid.c_str(), nullptr);
      gst_video_region_of_interest_meta_add_param(roi, object_id);
    }
    roi->id = f.roi_id.value_or(gint(i) + 1);  // (as taconiteadaface numbers the faces it embeds)
    // Five landmarks inside the 20x20 box (eyes, nose, mouth corners): keep-unknowns crops with them.
    const double x = 10 + 30 * double(i);
    const std::vector<taconite::vision::Point2> points = {
        {x + 6, 16}, {x + 14, 16}, {x + 10, 21}, {x + 7, 26}, {x + 13, 26}};
    gst_video_region_of_interest_meta_add_param(roi, taconite::gst::points_structure("landmarks", points));
    if (f.quality)
      gst_video_region_of_interest_meta_add_param(
          roi, gst_structure_new("quality", "embedding-score", G_TYPE_DOUBLE, *f.quality, nullptr));
    GstTaconiteEmbeddingMeta* e = gst_buffer_add_taconite_embedding_meta(
        buffer, roi->id, f.embedding.data(), guint(f.embedding.size()), 10.0, model, "cpu", TRUE);
    if (f.cached) e->status = GST_TACONITE_EMBEDDING_CACHED;
  }
  return buffer;
}

// What taconiteidentify wrote on one ROI.
struct Answer {
  std::string label;  // the identity param's label, "" when none
  std::string label_state;  // the identity param's label_state, "" without the param
  gint label_id = 0;
  GstTaconiteLabelState read_state = GST_TACONITE_LABEL_STATE_NONE;  // gsttaconitemeta's typed read
  std::string best;   // the first candidate, "" when none
  guint votes = 0;
  bool has_taconite_param = false;
};

std::vector<Answer> answers(GstBuffer* buffer) {
  std::vector<Answer> out;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    Answer a;
    if (GstStructure* identity = gst_video_region_of_interest_meta_get_param(roi, "identity")) {
      const gchar* label = gst_structure_get_string(identity, "label");
      const gchar* state = gst_structure_get_string(identity, "label_state");
      a.label = label ? label : "";
      a.label_state = state ? state : "(no label_state)";
      gst_structure_get_int(identity, "label_id", &a.label_id);
    }
    a.read_state = gst_taconite_roi_get_label_state(roi);
    if (GstStructure* t = gst_video_region_of_interest_meta_get_param(roi, "taconite-identity")) {
      a.has_taconite_param = true;
      gst_structure_get_uint(t, "votes", &a.votes);
      const GValue* candidates = gst_structure_get_value(t, "candidates");
      if (candidates && gst_value_array_get_size(candidates) > 0)
        a.best = g_value_get_string(gst_value_array_get_value(candidates, 0));
    }
    out.push_back(a);
  }
  return out;
}

class IdentifyHarnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("taconite-identify-harness-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (bus_) gst_bus_set_flushing(bus_, TRUE);  // its messages hold the element, which holds the bus
    if (identify_) gst_object_unref(identify_);
    if (h_) gst_harness_teardown(h_);
    if (bus_) gst_object_unref(bus_);
    fs::remove_all(dir_);
  }

  // A gallery file `name` holding `people` (name -> templates).
  using People = std::vector<std::pair<std::string, std::vector<std::vector<float>>>>;  // name -> templates
  fs::path make_gallery(const std::string& name, const People& people, const gallery::ModelFingerprint& model = kModel) {
    const fs::path path = dir_ / name;
    auto store = GalleryStore::create(path, model, kDim);
    EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
    for (const auto& [who, templates] : people) {
      std::vector<gallery::NewTemplate> t;
      for (const auto& v : templates) t.push_back({v, 0.0, "test", 0});
      EXPECT_TRUE(store.value().enroll(who, "", t).ok());
    }
    return path;
  }

  void start(const std::string& properties) {
    h_ = gst_harness_new_parse(("taconiteidentify name=identify " + properties).c_str());
    identify_ = gst_bin_get_by_name(GST_BIN(h_->element), "identify");
    bus_ = gst_bus_new();
    gst_element_set_bus(h_->element, bus_);
    gst_harness_set_src_caps_str(h_, gsttest::kRgbCaps);
  }

  std::vector<Answer> push(int index, const std::vector<Face>& faces) {
    EXPECT_EQ(gst_harness_push(h_, faces_frame(index, faces, model_name_.c_str())), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h_);
    std::vector<Answer> result = answers(out);
    gst_buffer_unref(out);
    return result;
  }

  // Stops the element: every open track ends, the writer drains.
  void stop() { gst_element_set_state(h_->element, GST_STATE_NULL); }
  guint64 counter(const char* name) { return gsttest::counter(identify_, name); }
  // Waits (hang guard only: ~2 min) until `name` reaches `value`.
  bool wait_for_counter(const char* name, guint64 value) {
    for (int i = 0; i < 6000; ++i) {
      if (counter(name) >= value) return true;
      g_usleep(20000);
    }
    return false;
  }

  std::vector<std::string> warnings() {
    std::vector<std::string> texts;
    while (GstMessage* m = gst_bus_pop_filtered(bus_, GST_MESSAGE_WARNING)) {
      GError* e = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_warning(m, &e, &debug);
      texts.push_back(std::string(e->message) + " | " + (debug ? debug : ""));
      g_error_free(e);
      g_free(debug);
      gst_message_unref(m);
    }
    return texts;
  }

  fs::path dir_;
  GstHarness* h_ = nullptr;
  GstElement* identify_ = nullptr;
  GstBus* bus_ = nullptr;
  std::string model_name_ = "IR-tiny";  // the model the embeddings say they come from
};

// Issue 23: label_state says whether the track has voted yet (pending: no label) or is decided
// (known: a gallery identity, ids from 1; unknown: label_id -1). Issue 30: the first vote decides.
TEST_F(IdentifyHarnessTest, LabelStateIsPendingUntilTheFirstVoteThenKnownOrUnknown) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\"");
  std::vector<Answer> a = push(0, {{5, {}}, {6, {}}});  // tracked, not embedded yet
  ASSERT_EQ(a.size(), 2u);
  for (const Answer& face : a) {
    EXPECT_EQ(face.label_state, "pending");
    EXPECT_EQ(face.read_state, GST_TACONITE_LABEL_STATE_PENDING);
    EXPECT_EQ(face.label, "");
  }
  a = push(1, {{5, unit_axis(0)}, {6, unit_axis(3)}});
  EXPECT_EQ(a[0].label_state, "known");
  EXPECT_EQ(a[0].label, "alice");
  EXPECT_GE(a[0].label_id, 1);
  EXPECT_EQ(a[1].label_state, "unknown");
  EXPECT_EQ(a[1].label, "unknown");
  EXPECT_EQ(a[1].label_id, -1);
  EXPECT_EQ(a[0].read_state, GST_TACONITE_LABEL_STATE_KNOWN);
  EXPECT_EQ(a[1].read_state, GST_TACONITE_LABEL_STATE_UNKNOWN);
}

// The uids of taconitetrack's tracks in these tests (only their presence matters to taconiteidentify).
constexpr const char* kUid5 = "8a3c54e6-2f0b-4c8e-9d1a-3b6f0e2d7c41";
constexpr const char* kNextUid5 = "c41e7a90-1d2b-4f3c-a5e6-7f8091a2b3c4";

// A track carrying taconitetrack's uid keeps its votes across a gap longer than track-timeout and
// loses them on the tracks-ended event naming it: the id seen after the event starts pending. A
// track without a uid still times out. The event is passed on downstream.
TEST_F(IdentifyHarnessTest, ATrackersTrackKeepsItsVotesUntilItsEndedEvent) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}, {"bob", {unit_axis(1)}}});
  start("gallery=\"" + people.string() + "\" track-timeout=1");
  std::vector<Answer> a = push(0, {Face{5, unit_axis(0)}.owned_by_tracker(kUid5), {6, unit_axis(1)}});
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(a[0].label, "alice");
  ASSERT_EQ(a[1].label, "bob");
  for (int frame = 1; frame < 4; ++frame) push(frame, {});  // a gap of 3 frames, more than track-timeout
  a = push(4, {Face{5, {}}.owned_by_tracker(kUid5), {6, {}}});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].label_state, "known") << "the tracker's track is not timed out";
  EXPECT_EQ(a[0].label, "alice");
  EXPECT_EQ(a[1].label_state, "pending") << "a track without a uid is: its votes went";

  while (GstEvent* e = gst_harness_try_pull_event(h_)) gst_event_unref(e);  // stream-start, caps, segment
  ASSERT_TRUE(gst_harness_push_event(h_, gsttest::tracks_ended_event(5, kUid5)));
  a = push(5, {Face{5, {}}.owned_by_tracker(kNextUid5)});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].label_state, "pending") << "track 5 ended: the id seen again is a new, undecided track";
  EXPECT_EQ(a[0].label, "");
  const std::vector<gsttest::EndedEvent> forwarded = gsttest::ended_events(h_);
  ASSERT_EQ(forwarded.size(), 1u);
  EXPECT_EQ(forwarded[0].tracks, (std::vector<std::pair<gint64, std::string>>{{5, kUid5}}));
}

// Issue 30: best-shot embedding (taconiteadaface reinfer-mode=best) computes about one embedding
// per track and reuses it: that one embedding decides the track, known or unknown, at once and for
// every later frame, with one taconite-identity message per track.
TEST_F(IdentifyHarnessTest, ATrackEmbeddedOnceIsDecidedOnThatEmbedding) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\"");  // the defaults
  for (int frame = 0; frame < 6; ++frame) {
    const bool reused = frame > 0;
    const std::vector<Answer> a = push(frame, {{5, unit_axis(0), reused, {}, 0.4}, {6, unit_axis(3), reused, {}, 0.7}});
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].label_state, "known") << "frame " << frame;
    EXPECT_EQ(a[0].label, "alice");
    EXPECT_EQ(a[1].label_state, "unknown") << "frame " << frame;
    EXPECT_EQ(a[0].votes, 1u);
  }
  int messages = 0;
  while (GstMessage* m = gst_bus_pop_filtered(bus_, GST_MESSAGE_ELEMENT)) {
    messages += gst_message_has_name(m, "taconite-identity");
    gst_message_unref(m);
  }
  EXPECT_EQ(messages, 2);
}

// Issue 30: a decided track keeps its label against one bad frame, however good its quality; a
// challenger with min-votes (default 2) votes and the most quality-weighted votes takes it.
TEST_F(IdentifyHarnessTest, OneBadFrameNeverFlipsALabelAChallengerWithMinVotesDoes) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}, {"bob", {unit_axis(1)}}});
  start("gallery=\"" + people.string() + "\"");
  EXPECT_EQ(push(0, {{5, unit_axis(0), false, {}, 0.3}}).at(0).label, "alice");
  EXPECT_EQ(push(1, {{5, unit_axis(1), false, {}, 0.9}}).at(0).label, "alice") << "one frame flipped the label";
  EXPECT_EQ(push(2, {{5, unit_axis(1), false, {}, 0.9}}).at(0).label, "bob");
  // With min-votes 3 the same two frames are not enough.
  g_object_set(identify_, "min-votes", 3u, nullptr);
  push(3, {{6, unit_axis(0), false, {}, 0.3}});
  push(4, {{6, unit_axis(1), false, {}, 0.9}});
  EXPECT_EQ(push(5, {{6, unit_axis(1), false, {}, 0.9}}).at(0).label, "alice");
  EXPECT_EQ(push(6, {{6, unit_axis(1), false, {}, 0.9}}).at(0).label, "bob");
}

// Issue 23: faces without a usable embedding (skipped, empty here): a tracked one shows its track's
// state (pending for a track never decided), an untracked one gets no identity param; an untracked
// face with an embedding is decided on its own frame.
TEST_F(IdentifyHarnessTest, FacesWithoutAnEmbeddingShowTheirTracksState) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" min-votes=1");
  ASSERT_EQ(push(0, {{5, unit_axis(0)}}).at(0).label_state, "known");
  const std::vector<Answer> a = push(1, {{5, {}}, {7, {}}, {{}, {}}, {{}, unit_axis(0)}});
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].label_state, "known");
  EXPECT_EQ(a[0].label, "alice");
  EXPECT_EQ(a[1].label_state, "pending");
  EXPECT_EQ(a[2].label_state, "");
  EXPECT_EQ(a[3].label_state, "known");
  EXPECT_EQ(a[3].label, "alice");
}

// Issue 23: taconite-identity messages name the stream by the element's `stream` (default: its
// name), keep GStreamer's stream id apart, and carry the UTC time and the label_state.
TEST_F(IdentifyHarnessTest, IdentityMessageCarriesStreamNameAndUtc) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" min-votes=1");
  const auto next_message = [this] {
    GstStructure* found = nullptr;
    while (GstMessage* m = gst_bus_pop_filtered(bus_, GST_MESSAGE_ELEMENT)) {
      if (!found && gst_message_has_name(m, "taconite-identity"))
        found = gst_structure_copy(gst_message_get_structure(m));
      gst_message_unref(m);
    }
    return found;
  };
  push(0, {{5, unit_axis(0)}});
  GstStructure* m = next_message();
  ASSERT_NE(m, nullptr);
  EXPECT_STREQ(gst_structure_get_string(m, "stream"), "identify");
  EXPECT_NE(gst_structure_get_string(m, "stream-id"), nullptr);
  EXPECT_STREQ(gst_structure_get_string(m, "label-state"), "known");
  const gchar* utc = gst_structure_get_string(m, "utc");
  ASSERT_NE(utc, nullptr);
  GDateTime* when = g_date_time_new_from_iso8601(utc, nullptr);
  ASSERT_NE(when, nullptr) << utc;
  EXPECT_EQ(g_date_time_get_utc_offset(when), 0);
  EXPECT_LT(std::abs(g_date_time_to_unix(when) - g_get_real_time() / G_USEC_PER_SEC), 600) << utc;
  g_date_time_unref(when);
  gst_structure_free(m);
  g_object_set(identify_, "stream", "door1", nullptr);
  push(1, {{6, unit_axis(0)}});
  m = next_message();
  ASSERT_NE(m, nullptr);
  EXPECT_STREQ(gst_structure_get_string(m, "stream"), "door1");
  gst_structure_free(m);
}

// Issue 20 item 10: `mv new.db people.db` while playing is picked up (the watcher reopens the new file).
TEST_F(IdentifyHarnessTest, GalleryReplacedByMvWhilePlayingIsPickedUp) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" poll-interval=20");
  ASSERT_EQ(push(0, {{{}, unit_axis(0)}}).at(0).label, "alice");
  {  // an enrollment while playing: the old file's WAL has seen writes
    auto writer = GalleryStore::open(people, GalleryStore::Access::ReadWrite);
    std::vector<gallery::NewTemplate> t = {{unit_axis(1), 0.0, "test", 0}};
    ASSERT_TRUE(writer.value().enroll("dave", "", t).ok());
  }
  const fs::path replacement = make_gallery("new.db", {{"carol", {unit_axis(0)}}, {"erin", {unit_axis(2)}}});
  fs::rename(replacement, people);
  std::string label;
  for (int frame = 1; frame < 6000 && label != "carol"; ++frame) {  // hang guard: ~2 min
    label = push(frame, {{{}, unit_axis(0)}}).at(0).label;
    if (label != "carol") g_usleep(20000);
  }
  EXPECT_EQ(label, "carol");
  EXPECT_EQ(push(9000, {{{}, unit_axis(2)}}).at(0).label, "erin");
  EXPECT_EQ(warnings(), std::vector<std::string>{});
}

// Issue 20 item 10: a deleted gallery posts one warning (not one per poll) and the loaded one stays in use.
TEST_F(IdentifyHarnessTest, DeletedGalleryWarnsOnceAndKeepsTheLoadedOne) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" poll-interval=20");
  fs::remove(people);
  std::vector<std::string> seen;
  for (int i = 0; i < 6000 && seen.empty(); ++i) {  // hang guard: ~2 min
    seen = warnings();
    if (seen.empty()) g_usleep(20000);
  }
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("people.db: the gallery file is gone"), std::string::npos) << seen[0];
  for (int i = 0; i < 5; ++i) {  // more polls (forced ones too) report nothing new
    g_signal_emit_by_name(identify_, "reload");
    g_usleep(40000);
  }
  EXPECT_EQ(warnings(), std::vector<std::string>{});
  EXPECT_EQ(push(0, {{{}, unit_axis(0)}}).at(0).label, "alice");
}

// Issue 20 item 16: a reused (cached) embedding is not searched again: it keeps its track's answer.
TEST_F(IdentifyHarnessTest, CachedEmbeddingKeepsItsTracksLastAnswer) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}, {"bob", {unit_axis(1)}}});
  start("gallery=\"" + people.string() + "\" min-votes=1");
  Answer first = push(0, {{5, unit_axis(0)}}).at(0);
  EXPECT_EQ(first.label, "alice");
  EXPECT_EQ(first.best, "alice");
  // (a cached meta is the same vector again; a different one here shows whether it was searched)
  Answer reused = push(1, {{5, unit_axis(1), true}}).at(0);
  EXPECT_EQ(reused.best, "alice") << "the cached embedding was searched";
  EXPECT_EQ(reused.label, "alice");
  EXPECT_EQ(reused.votes, 1u);
  Answer fresh = push(2, {{5, unit_axis(1)}}).at(0);
  EXPECT_EQ(fresh.best, "bob");
  EXPECT_EQ(fresh.votes, 2u);
}

// Issue 20 item 16: over the search budget, new embeddings wait their turn (longest waiting
// first) and keep their track's answer meanwhile; a deferred one votes when it is searched.
TEST_F(IdentifyHarnessTest, SearchBudgetSpreadsSearchesOverTheTracks) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}, {"bob", {unit_axis(1)}}});
  start("gallery=\"" + people.string() + "\" min-votes=1 search-budget=2");  // one search of 2 templates
  std::vector<Answer> last;
  for (int frame = 0; frame < 4; ++frame) last = push(frame, {{1, unit_axis(0)}, {2, unit_axis(1)}});
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0].votes, 2u);  // 4 frames, one search each, shared by the two tracks
  EXPECT_EQ(last[1].votes, 2u);
  EXPECT_EQ(last[0].label, "alice");
  EXPECT_EQ(last[1].label, "bob");
  // A deferred new embedding that is then reused (cached) still votes once when searched.
  g_object_set(identify_, "search-budget", G_GUINT64_CONSTANT(0), nullptr);
  last = push(4, {{1, unit_axis(0), true}, {2, unit_axis(1), true}});
  EXPECT_EQ(last[0].votes + last[1].votes, 5u);  // only the one deferred at frame 3 votes
}

// Issue 20 item 4: a NaN or Inf embedding is refused with one warning, never searched.
TEST_F(IdentifyHarnessTest, NonFiniteEmbeddingsAreSkippedWithOneWarning) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" min-votes=1");
  for (int frame = 0; frame < 3; ++frame) {
    std::vector<float> bad = unit_axis(0);
    bad[1] = frame == 1 ? INFINITY : std::nanf("");
    const std::vector<Answer> a = push(frame, {{1, bad}, {2, unit_axis(0)}});
    ASSERT_EQ(a.size(), 2u);
    EXPECT_FALSE(a[0].has_taconite_param);
    EXPECT_EQ(a[1].label, "alice");
  }
  const std::vector<std::string> seen = warnings();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("NaN or Inf"), std::string::npos) << seen[0];
}

// Item 7's assumption here: an embedding keyed by a ROI id several ROIs share labels none of them.
TEST_F(IdentifyHarnessTest, EmbeddingOfAnIdSeveralRoisShareLabelsNone) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\"");
  GstBuffer* buffer = faces_frame(0, {{{}, unit_axis(0), false, 0}});
  GstVideoRegionOfInterestMeta* other = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 60, 60, 20, 20);
  other->id = 0;  // facedetect: every ROI has id 0
  ASSERT_EQ(gst_harness_push(h_, buffer), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h_);
  for (const Answer& a : answers(out)) EXPECT_FALSE(a.has_taconite_param);
  gst_buffer_unref(out);
}

void count_critical(const gchar*, GLogLevelFlags, const gchar* message, gpointer data) {
  static_cast<std::vector<std::string>*>(data)->push_back(message);
}

// A segment in another format than TIME has no running time: the message says none, no g_critical.
TEST_F(IdentifyHarnessTest, NonTimeSegmentGivesNoRunningTimeAndNoCritical) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" min-votes=1");
  GstSegment bytes;
  gst_segment_init(&bytes, GST_FORMAT_BYTES);
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_segment(&bytes)));
  std::vector<std::string> criticals;
  const guint handler = g_log_set_handler("GStreamer", G_LOG_LEVEL_CRITICAL, count_critical, &criticals);
  EXPECT_EQ(push(0, {{3, unit_axis(0)}}).at(0).label, "alice");
  g_log_remove_handler("GStreamer", handler);
  EXPECT_EQ(criticals, std::vector<std::string>{});
  guint64 running_time = 0;
  bool found = false;
  while (GstMessage* m = gst_bus_pop_filtered(bus_, GST_MESSAGE_ELEMENT)) {
    if (gst_message_has_name(m, "taconite-identity")) {
      found = gst_structure_get_uint64(gst_message_get_structure(m), "running-time", &running_time);
    }
    gst_message_unref(m);
  }
  ASSERT_TRUE(found);
  EXPECT_EQ(running_time, GST_CLOCK_TIME_NONE);
}

// GST_PARAM_MUTABLE_READY properties are refused while playing; the others change.
TEST_F(IdentifyHarnessTest, ReadyOnlyPropertiesAreNotChangedWhilePlaying) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\"");
  g_object_set(identify_, "gallery", "/elsewhere.db", "poll-interval", 7u, "threshold", 0.9, "keep-unknowns", TRUE,
               "unknowns-max-count", 5u, "unknowns-max-age", guint64(60), nullptr);
  gchar* path = nullptr;
  guint poll = 0, max_count = 0;
  double threshold = 0;
  gboolean keep = TRUE;
  guint64 max_age = 0;
  g_object_get(identify_, "gallery", &path, "poll-interval", &poll, "threshold", &threshold, "keep-unknowns", &keep,
               "unknowns-max-count", &max_count, "unknowns-max-age", &max_age, nullptr);
  EXPECT_STREQ(path, people.c_str());
  EXPECT_EQ(poll, 1000u);
  EXPECT_FALSE(keep);
  EXPECT_EQ(max_count, 10000u);
  EXPECT_EQ(max_age, guint64(30 * 24 * 3600));
  EXPECT_DOUBLE_EQ(threshold, 0.9);
  g_free(path);
}

// A unit vector at cosine `c` to axis 0 (the rest on axis 1).
std::vector<float> at_cosine(float c) {
  std::vector<float> v(kDim, 0.0f);
  v[0] = c;
  v[1] = std::sqrt(1.0f - c * c);
  return v;
}

// Issue 30: threshold unset is the model's: the tiny ONNX embedder's description recommends 0.42,
// so a face at 0.41 is unknown with model= and known with the fallback 0.4 without it; a threshold
// set wins. The start says which in an INFO message, and the property reads the threshold in use.
class IdentifyThresholdTest : public IdentifyHarnessTest {
 protected:
  void SetUp() override {
    IdentifyHarnessTest::SetUp();
    const char* dir = std::getenv("TACONITE_TEST_ONNX_DIR");
    if (dir == nullptr || *dir == '\0') GTEST_SKIP() << "TACONITE_TEST_ONNX_DIR not set (meson test sets it)";
    onnx_ = fs::path(dir) / "tiny.onnx";
    ASSERT_TRUE(fs::exists(onnx_)) << "build the onnx-test-models target";
    auto fingerprint = gallery::fingerprint_model(onnx_);
    ASSERT_TRUE(fingerprint.ok()) << fingerprint.error().message;
    people_ = make_gallery("people.db", {{"alice", {unit_axis(0)}}}, fingerprint.value());
    model_name_ = fingerprint.value().model;
  }
  // The label of a face at cosine 0.41 to alice, and the threshold the element reads, with `properties`.
  std::pair<std::string, double> judge(const std::string& properties) {
    start("gallery=\"" + people_.string() + "\" " + properties);
    const std::string label = push(0, {{5, at_cosine(0.41f)}}).at(0).label;
    double threshold = 0;
    g_object_get(identify_, "threshold", &threshold, nullptr);
    return {label, threshold};
  }
  // The start's INFO message (a restart with the bus attached: the first start had none).
  std::string start_info() {
    gst_element_set_state(h_->element, GST_STATE_NULL);
    gst_bus_set_flushing(bus_, FALSE);
    EXPECT_NE(gst_element_set_state(h_->element, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    std::string text;
    while (GstMessage* m = gst_bus_pop_filtered(bus_, GST_MESSAGE_INFO)) {
      GError* e = nullptr;
      gst_message_parse_info(m, &e, nullptr);
      if (std::string(e->message).starts_with("Match threshold")) text = e->message;
      g_error_free(e);
      gst_message_unref(m);
    }
    return text;
  }
  fs::path onnx_, people_;
};

TEST_F(IdentifyThresholdTest, UnsetIsTheModelsRecommendation) {
  const auto [label, threshold] = judge("model=\"" + onnx_.string() + "\"");
  EXPECT_EQ(label, "unknown");
  EXPECT_NEAR(threshold, 0.42, 1e-12);
  const std::string info = start_info();
  EXPECT_NE(info.find("0.42"), std::string::npos) << info;
  EXPECT_NE(info.find("the model's recommended threshold"), std::string::npos) << info;
  EXPECT_NE(info.find(onnx_.string()), std::string::npos) << info;
}

TEST_F(IdentifyThresholdTest, BundleIsAnAliasOfModel) {
  const auto [label, threshold] = judge("bundle=\"" + onnx_.string() + "\"");
  EXPECT_EQ(label, "unknown");
  EXPECT_NEAR(threshold, 0.42, 1e-12);
  gchar* model = nullptr;
  g_object_get(identify_, "model", &model, nullptr);
  EXPECT_STREQ(model, onnx_.c_str());
  g_free(model);
}

TEST_F(IdentifyThresholdTest, WithoutAModelTheFallbackIs04) {
  const auto [label, threshold] = judge("");
  EXPECT_EQ(label, "alice");
  EXPECT_NEAR(threshold, 0.4, 1e-12);
  EXPECT_NE(start_info().find("fallback: no model set"), std::string::npos);
}

TEST_F(IdentifyThresholdTest, AThresholdSetWins) {
  const auto [label, threshold] = judge("model=\"" + onnx_.string() + "\" threshold=0.405");
  EXPECT_EQ(label, "alice");
  EXPECT_NEAR(threshold, 0.405, 1e-12);
  EXPECT_NE(start_info().find("the threshold property"), std::string::npos);
}

TEST_F(IdentifyThresholdTest, ADescriptionWithABadThresholdFailsTheStartNamingItsField) {
  const fs::path proc = dir_ / "bad-threshold.json";
  std::ifstream in(fs::path(onnx_).replace_extension(".json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("0.42");
  ASSERT_NE(at, std::string::npos);
  std::ofstream(proc) << text.replace(at, 4, "1.5");
  GstElement* identify = gst_element_factory_make("taconiteidentify", nullptr);
  g_object_set(identify, "gallery", people_.c_str(), "model", onnx_.c_str(), "model-proc", proc.c_str(), nullptr);
  const gsttest::StartFailure failure = gsttest::start_paused(identify);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.debug.find(proc.string()), std::string::npos) << failure.debug;
  EXPECT_NE(failure.debug.find("threshold"), std::string::npos) << failure.debug;
}

// Issue 20 item 17: the first HNSW build does not hold the start: exact search serves until the
// watcher's thread has built (and saved) the index.
TEST_F(IdentifyHarnessTest, FirstHnswBuildRunsInTheBackgroundWhileExactSearchServes) {
  std::vector<std::vector<float>> many;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (int i = 0; i < 300; ++i) {
    std::vector<float> v(kDim);
    for (float& x : v) x = normal(rng);
    many.push_back(v);
  }
  const fs::path people = make_gallery("people.db", {{"crowd", many}, {"alice", {unit_axis(0)}}});
  gallery::IndexOptions options;
  options.approximate_above = 100;
  std::vector<std::string> notes;
  std::mutex lock;
  taconite::gst::GalleryWatcher watcher(people, options, 0, [&](auto, const std::string& message) {
    std::lock_guard guard(lock);
    notes.push_back(message);
  });
  std::string note;
  ASSERT_TRUE(watcher.start(std::nullopt, &note).ok());
  const auto first = watcher.current();
  EXPECT_FALSE(first->approximate()) << note;
  EXPECT_TRUE(first->approximate_pending()) << note;
  EXPECT_EQ(first->search(unit_axis(0), 1).at(0).name, "alice");
  for (int i = 0; i < 12000 && !watcher.current()->approximate(); ++i) g_usleep(10000);  // hang guard: 2 min
  ASSERT_TRUE(watcher.current()->approximate());
  EXPECT_EQ(watcher.current()->search(unit_axis(0), 1).at(0).name, "alice");
  EXPECT_TRUE(fs::exists(people.string() + ".hnsw"));
  std::lock_guard guard(lock);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("saved to"), std::string::npos) << notes.back();
}

// The watcher's thread is a C++/C boundary too: a report that throws must not end the process,
// and the thread goes on watching.
TEST_F(IdentifyHarnessTest, WatcherThreadSurvivesAReportThatThrows) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  std::atomic<int> reports{0};
  taconite::gst::GalleryWatcher watcher(people, {}, 10, [&](auto, const std::string&) {
    ++reports;
    throw std::bad_alloc();
  });
  std::string note;
  ASSERT_TRUE(watcher.start(std::nullopt, &note).ok());
  fs::remove(people);  // a warning: the report throws
  for (int i = 0; i < 12000 && reports == 0; ++i) g_usleep(10000);
  ASSERT_GT(reports.load(), 0);
  make_gallery("people.db", {{"bob", {unit_axis(0)}}});  // a new file: reloaded, reported (throws again)
  const auto best = [&] {  // (the new file may be seen before its enrollment)
    const auto matches = watcher.current()->search(unit_axis(0), 1);
    return matches.empty() ? std::string() : matches[0].name;
  };
  for (int i = 0; i < 12000 && best() != "bob"; ++i) g_usleep(10000);
  EXPECT_EQ(best(), "bob");
}

// Issue 24: a PostgreSQL gallery's database that goes away while a pipeline plays.
// tests/gallery/test_gallery_postgres.py runs this with TACONITE_TEST_PG_OUTAGE_GALLERY (an empty
// database's connection string) and the shell commands that stop and start its server
// (TACONITE_TEST_PG_STOP, TACONITE_TEST_PG_START). A thread pushes frames like a live source; the
// waits are hang guards only, nothing is timed.
class PostgresOutage {
 public:
  PostgresOutage(GstHarness* h, GstBus* bus) : h_(h), bus_(bus) {
    pusher_ = std::thread([this] {
      // Three untracked faces (decided frame by frame): alice's, bob's and dave's embeddings.
      const std::vector<Face> faces = {{std::nullopt, unit_axis(0)}, {std::nullopt, unit_axis(1)},
                                       {std::nullopt, unit_axis(3)}};
      for (int i = 0; !stop_; ++i) {
        if (gst_harness_push(h_, faces_frame(i, faces)) != GST_FLOW_OK) break;
        GstBuffer* out = gst_harness_pull(h_);
        if (!out) break;
        std::vector<std::string> labels;
        for (const Answer& a : answers(out)) labels.push_back(a.label);
        gst_buffer_unref(out);
        {
          std::lock_guard guard(lock_);
          frames_.push_back(labels);
        }
        g_usleep(20000);  // a live source's pace
      }
    });
  }
  ~PostgresOutage() {
    stop_ = true;
    pusher_.join();
  }

  std::size_t frames() {
    std::lock_guard guard(lock_);
    return frames_.size();
  }
  std::vector<std::string> labels(std::size_t frame) {
    std::lock_guard guard(lock_);
    return frames_.at(frame);
  }
  // Hang guard: two minutes for anything to happen on a loaded machine.
  bool wait_for(const std::function<bool()>& done) {
    for (int i = 0; i < 12000; ++i) {
      take_messages();
      if (done()) return true;
      g_usleep(10000);
    }
    return false;
  }
  bool wait_for_label(std::size_t face, const std::string& label) {
    return wait_for([&] {
      const std::size_t n = frames();
      return n > 0 && labels(n - 1).at(face) == label;
    });
  }
  void take_messages() {
    while (GstMessage* m = gst_bus_pop_filtered(bus_, GstMessageType(GST_MESSAGE_WARNING | GST_MESSAGE_INFO))) {
      GError* e = nullptr;
      gchar* debug = nullptr;
      const bool warning = GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING;
      if (warning)
        gst_message_parse_warning(m, &e, &debug);
      else
        gst_message_parse_info(m, &e, &debug);
      (warning ? warnings : infos).push_back(e->message);
      g_error_free(e);
      g_free(debug);
      gst_message_unref(m);
    }
  }
  std::vector<std::string> warnings, infos;

 private:
  GstHarness* h_;
  GstBus* bus_;
  std::mutex lock_;
  std::vector<std::vector<std::string>> frames_;  // per output frame: the faces' labels
  std::atomic<bool> stop_{false};
  std::thread pusher_;
};

// poll-interval=0: neither noticing the outage nor coming back may depend on the poll.
TEST_F(IdentifyHarnessTest, PostgresOutageKeepsIdentifyingWarnsOnceAndRecovers) {
  const std::string database = env("TACONITE_TEST_PG_OUTAGE_GALLERY");
  const std::string stop_server = env("TACONITE_TEST_PG_STOP"), start_server = env("TACONITE_TEST_PG_START");
  if (database.empty() || stop_server.empty() || start_server.empty())
    GTEST_SKIP() << "needs a PostgreSQL server (run by the gallery-postgres test)";
  {
    auto store = GalleryStore::create(database, kModel, kDim);
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE(store.value().enroll("alice", "", std::vector<gallery::NewTemplate>{{unit_axis(0), 0.0, "test", 0}}).ok());
  }
  const auto enroll = [&](const std::string& name, int axis) {
    auto store = GalleryStore::open(database, GalleryStore::Access::ReadWrite);
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE(store.value().enroll(name, "", std::vector<gallery::NewTemplate>{{unit_axis(axis), 0.0, "test", 0}}).ok());
  };
  start("gallery=\"" + database + "\" poll-interval=0");
  {
    PostgresOutage run(h_, bus_);
    ASSERT_TRUE(run.wait_for_label(0, "alice"));
    EXPECT_EQ(run.labels(run.frames() - 1), (std::vector<std::string>{"alice", "unknown", "unknown"}));

    // The database goes away: one warning, and the video goes on identified as before.
    const std::size_t before_stop = run.frames();
    ASSERT_EQ(std::system(stop_server.c_str()), 0) << stop_server;
    ASSERT_TRUE(run.wait_for([&] { return !run.warnings.empty(); }));
    const std::size_t warned_at = run.frames();
    // Long enough for the watcher to try again a few times (0.5 s, 1 s, 2 s): 100 frames of 20 ms.
    ASSERT_TRUE(run.wait_for([&] { return run.frames() >= warned_at + 100; }));
    for (std::size_t i = before_stop; i < run.frames(); ++i)
      EXPECT_EQ(run.labels(i), (std::vector<std::string>{"alice", "unknown", "unknown"})) << "frame " << i;
    ASSERT_EQ(run.warnings.size(), 1u);
    EXPECT_NE(run.warnings[0].find(database + ": the gallery is unreachable; identification continues on revision 1"),
              std::string::npos)
        << run.warnings[0];
    EXPECT_TRUE(run.infos.empty());

    // Back: bob, enrolled at once (before the watcher reconnects, most likely: its notification is
    // lost, the revision tells), then dave (through the notification, the listener back too).
    ASSERT_EQ(std::system(start_server.c_str()), 0) << start_server;
    enroll("bob", 1);
    ASSERT_TRUE(run.wait_for([&] { return !run.infos.empty(); }));
    EXPECT_NE(run.infos[0].find(database + ": the gallery is reachable again; identifying with revision"),
              std::string::npos)
        << run.infos[0];
    ASSERT_TRUE(run.wait_for_label(1, "bob"));
    enroll("dave", 3);
    ASSERT_TRUE(run.wait_for_label(2, "dave"));
    EXPECT_EQ(run.labels(run.frames() - 1), (std::vector<std::string>{"alice", "bob", "dave"}));
    EXPECT_EQ(run.warnings.size(), 1u);
    EXPECT_EQ(run.infos.size(), 1u);

    // A second outage is a second warning; the element then stops with the server gone (a
    // Unix socket with no server refuses at once: nothing waits).
    ASSERT_EQ(std::system(stop_server.c_str()), 0) << stop_server;
    ASSERT_TRUE(run.wait_for([&] { return run.warnings.size() == 2; }));
    EXPECT_NE(run.warnings[1].find("continues on revision 3"), std::string::npos) << run.warnings[1];
  }
  gst_harness_teardown(h_);  // stops the element (a hang here is the failure)
  h_ = nullptr;
  EXPECT_EQ(std::system(start_server.c_str()), 0) << start_server;
}

// Issue 20 item 4: a template holding NaN (damaged in the file) never enters the index; the
// reload that meets it is a warning.
TEST_F(IdentifyHarnessTest, NonFiniteTemplateIsLeftOutOfAReloadWithAWarning) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}, {"bob", {unit_axis(1)}}});
  std::vector<std::string> warnings_seen;
  std::mutex lock;
  taconite::gst::GalleryWatcher watcher(people, {}, 0, [&](auto level, const std::string& message) {
    std::lock_guard guard(lock);
    if (level == taconite::gst::GalleryWatcher::Level::Warning) warnings_seen.push_back(message);
  });
  std::string note;
  ASSERT_TRUE(watcher.start(std::nullopt, &note).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(people.c_str(), &db), SQLITE_OK);
  std::vector<float> nan(kDim, std::nanf(""));
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE templates SET embedding = ? WHERE id = 2", -1, &st, nullptr), SQLITE_OK);
  sqlite3_bind_blob(st, 1, nan.data(), int(nan.size() * sizeof(float)), SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
  watcher.reload();
  const auto warned = [&] {
    std::lock_guard guard(lock);
    return !warnings_seen.empty();
  };
  for (int i = 0; i < 12000 && !warned(); ++i) g_usleep(10000);  // hang guard (reported after the swap)
  EXPECT_EQ(watcher.current()->skipped_templates(), 1u);
  EXPECT_EQ(watcher.current()->templates(), 1u);
  const auto matches = watcher.current()->search(unit_axis(1), 2);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].name, "alice");
  EXPECT_TRUE(std::isfinite(matches[0].similarity));
  std::lock_guard guard(lock);
  ASSERT_EQ(warnings_seen.size(), 1u);
  EXPECT_NE(warnings_seen[0].find("left out 1 templates holding NaN or Inf"), std::string::npos) << warnings_seen[0];
}

// ---------------------------------------------------------------------------------------------
// Issue 24: keep-unknowns keeps the best face of each track that ends decided unknown in the gallery.

// A unit vector `a` x axis(i) + axis(j), normalised: similarity to axis(i) below the threshold.
std::vector<float> mostly(int j, int i, float a) {
  std::vector<float> v(kDim, 0.0f);
  v[std::size_t(j)] = 1.0f;
  v[std::size_t(i)] = a;
  const float n = std::sqrt(1.0f + a * a);
  for (float& x : v) x /= n;
  return v;
}

std::vector<gallery::UnknownFaceRow> kept_unknowns(const std::string& location) {
  auto store = GalleryStore::open(location, GalleryStore::Access::ReadOnly);
  EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
  if (!store.ok()) return {};
  auto rows = store.value().unknown_faces(true, true);
  EXPECT_TRUE(rows.ok()) << (rows.ok() ? "" : rows.error().message);
  return rows.ok() ? rows.value() : std::vector<gallery::UnknownFaceRow>{};
}

// A track evicted decided unknown is stored once, with its best face (by quality): its embedding,
// nearest identity (below the threshold), stream, track id, time span and a 112x112 JPEG; a track
// embedded once (best-shot) is decided on that one embedding and kept too; a known track and a track
// that ended pending (never embedded) are not.
TEST_F(IdentifyHarnessTest, KeepUnknownsStoresATrackThatEndsUnknownOnceWithItsBestFace) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}, {"bob", {unit_axis(1)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true track-timeout=2 stream=door1");
  const std::vector<float> best = mostly(3, 1, 0.3f);
  push(0, {{5, mostly(3, 1, 0.1f), false, {}, 0.2}, {6, unit_axis(0)}, {7, unit_axis(4)}, {8, {}}});
  push(1, {{5, best, false, {}, 0.9}, {6, unit_axis(0)}});
  ASSERT_EQ(push(2, {{5, mostly(3, 1, 0.2f), false, {}, 0.5}, {6, unit_axis(0)}}).at(0).label_state, "unknown");
  for (int frame = 3; frame < 6; ++frame) push(frame, {});  // the tracks time out
  ASSERT_TRUE(wait_for_counter("unknowns-kept", 2));    // written while playing, not at stop
  stop();
  EXPECT_EQ(counter("unknowns-kept"), 2u);
  EXPECT_EQ(counter("unknowns-dropped"), 0u);
  std::vector<gallery::UnknownFaceRow> rows = kept_unknowns(people);
  ASSERT_EQ(rows.size(), 2u);
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.track_id < y.track_id; });
  EXPECT_EQ(rows[1].track_id, 7);  // its one embedding decided it unknown
  EXPECT_EQ(rows[1].embedding, unit_axis(4));
  const gallery::UnknownFaceRow& r = rows[0];
  EXPECT_EQ(r.stream, "door1");
  EXPECT_EQ(r.track_id, 5);
  ASSERT_EQ(r.embedding.size(), std::size_t(kDim));
  for (int i = 0; i < kDim; ++i) EXPECT_NEAR(r.embedding[std::size_t(i)], best[std::size_t(i)], 1e-5);
  EXPECT_NEAR(r.quality, 0.9, 1e-9);
  EXPECT_EQ(r.nearest_name, "bob");
  EXPECT_GT(r.nearest_identity, 0);
  EXPECT_NEAR(r.nearest_similarity, best[1], 1e-5);
  EXPECT_LE(r.first_seen_ms, r.last_seen_ms);
  EXPECT_LT(std::abs(r.last_seen_ms / 1000 - g_get_real_time() / G_USEC_PER_SEC), 600);
  const cv::Mat picture = cv::imdecode(r.jpeg, cv::IMREAD_COLOR);
  EXPECT_EQ(picture.cols, 112);
  EXPECT_EQ(picture.rows, 112);
}

// keep-unknowns with taconitetrack upstream: an unknown track carrying its uid is not ended by
// track-timeout (one visit across a longer gap, its best face from either part) but by the
// tracks-ended event, which hands its face to the writer right then (no frame follows the event
// here, so nothing else could); a track without a uid still ends on track-timeout.
TEST_F(IdentifyHarnessTest, KeepUnknownsHandsATrackersUnknownTrackToTheWriterAtItsEndedEvent) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}, {"bob", {unit_axis(1)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true track-timeout=1 stream=door1");
  const std::vector<float> best = mostly(3, 1, 0.3f);
  push(0, {Face{5, mostly(3, 1, 0.1f), false, {}, 0.2}.owned_by_tracker(kUid5), {6, unit_axis(4)}});
  for (int frame = 1; frame < 4; ++frame) push(frame, {});  // a gap of 3 frames, more than track-timeout
  ASSERT_TRUE(wait_for_counter("unknowns-kept", 1));       // track 6, timed out
  push(4, {Face{5, best, false, {}, 0.9}.owned_by_tracker(kUid5)});  // track 5 again, a better face
  ASSERT_TRUE(gst_harness_push_event(h_, gsttest::tracks_ended_event(5, kUid5)));
  ASSERT_TRUE(wait_for_counter("unknowns-kept", 2));  // written while playing, before any stop
  stop();
  EXPECT_EQ(counter("unknowns-kept"), 2u) << "track 5 kept once: one visit, not one per side of the gap";
  EXPECT_EQ(counter("unknowns-dropped"), 0u);
  std::vector<gallery::UnknownFaceRow> rows = kept_unknowns(people);
  ASSERT_EQ(rows.size(), 2u);
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.track_id < y.track_id; });
  EXPECT_EQ(rows[0].track_id, 5);
  EXPECT_NEAR(rows[0].quality, 0.9, 1e-9) << "the best face of the whole visit";
  ASSERT_EQ(rows[0].embedding.size(), std::size_t(kDim));
  for (int i = 0; i < kDim; ++i) EXPECT_NEAR(rows[0].embedding[std::size_t(i)], best[std::size_t(i)], 1e-5);
  EXPECT_EQ(rows[1].track_id, 6);
  EXPECT_EQ(rows[1].embedding, unit_axis(4));
}

// A flush and the end of the stream end every open track (kept while playing, before any stop).
TEST_F(IdentifyHarnessTest, KeepUnknownsFlushAndEndOfStreamEndEveryTrack) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true min-votes=1");
  push(0, {{1, unit_axis(3)}});
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_start()));
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_stop(TRUE)));
  ASSERT_TRUE(wait_for_counter("unknowns-kept", 1));
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_segment(&segment)));
  push(1, {{1, unit_axis(3)}});  // the same id after the flush: another track
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_eos()));
  ASSERT_TRUE(wait_for_counter("unknowns-kept", 2));
  stop();
  EXPECT_EQ(kept_unknowns(people).size(), 2u);
}

// Off by default: nothing is written into the gallery.
TEST_F(IdentifyHarnessTest, KeepUnknownsOffStoresNothing) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" min-votes=1 track-timeout=0");
  for (int frame = 0; frame < 4; ++frame) push(frame, {{frame, unit_axis(3)}});
  stop();
  EXPECT_EQ(counter("unknowns-kept"), 0u);
  EXPECT_TRUE(kept_unknowns(people).empty());
}

// unknowns-max-count bounds the gallery's unknown faces: the newest stay. Every track ends at stop.
TEST_F(IdentifyHarnessTest, KeepUnknownsRetentionKeepsTheNewest) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true unknowns-max-count=2 min-votes=1 track-timeout=0");
  for (int frame = 0; frame < 4; ++frame) push(frame, {{frame + 1, unit_axis(3)}});
  stop();
  EXPECT_EQ(counter("unknowns-kept"), 4u);
  const std::vector<gallery::UnknownFaceRow> rows = kept_unknowns(people);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].track_id, 3);
  EXPECT_EQ(rows[1].track_id, 4);
}

// A gallery whose writes block (another writer holds it) never holds the video: the queue fills
// and the faces beyond it are dropped, counted; what is queued is written once the gallery is free.
TEST_F(IdentifyHarnessTest, KeepUnknownsFullQueueDropsAreCounted) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  {  // the table exists before the lock (a first read-write use would create it)
    auto store = GalleryStore::open(people, GalleryStore::Access::ReadWrite);
    ASSERT_TRUE(store.ok());
  }
  start("gallery=\"" + people.string() + "\" keep-unknowns=true min-votes=1 track-timeout=0");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(people.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  constexpr int kTracks = 41;  // 40 end while the gallery is held, the last at stop
  for (int frame = 0; frame < kTracks; ++frame) push(frame, {{frame + 1, unit_axis(3)}});
  // At most 32 queued and one being written: the rest were dropped, however slow this machine.
  EXPECT_GE(counter("unknowns-dropped"), guint64(kTracks - 1 - 33));
  EXPECT_EQ(counter("unknowns-kept"), 0u);
  ASSERT_EQ(sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  stop();
  EXPECT_EQ(counter("unknowns-kept") + counter("unknowns-dropped"), guint64(kTracks));
  EXPECT_EQ(kept_unknowns(people).size(), counter("unknowns-kept"));
}

// A gallery that cannot be written (here: deleted while playing) posts one warning, not one per
// face; the faces are dropped, counted, and every buffer still flows.
TEST_F(IdentifyHarnessTest, KeepUnknownsUnwritableGalleryWarnsOnceAndVideoFlows) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true min-votes=1 track-timeout=0 poll-interval=0");
  fs::remove(people);
  for (int frame = 0; frame < 4; ++frame) push(frame, {{frame + 1, unit_axis(3)}});  // push() checks GST_FLOW_OK
  stop();
  EXPECT_EQ(counter("unknowns-kept"), 0u);
  EXPECT_EQ(counter("unknowns-dropped"), 4u);
  int about_unknowns = 0;
  for (const std::string& w : warnings())
    if (w.find("unknown face") != std::string::npos) {
      ++about_unknowns;
      EXPECT_NE(w.find("people.db"), std::string::npos) << w;
    }
  EXPECT_EQ(about_unknowns, 1);
}

// Issue 29 bug 1: the gallery file deleted while the writer has it open. SQLite would go on writing
// into the deleted file (the faces counted kept, found nowhere): the writes fail instead, counted
// dropped, with one warning naming the gallery.
TEST_F(IdentifyHarnessTest, KeepUnknownsGalleryDeletedWhileWritingDropsAndWarnsOnce) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true min-votes=1 track-timeout=0 poll-interval=0");
  push(0, {{1, unit_axis(3)}});
  push(1, {{2, unit_axis(3)}});  // track 1 ends: written, the writer's connection open
  ASSERT_TRUE(wait_for_counter("unknowns-kept", 1));
  fs::remove(people);
  push(2, {{3, unit_axis(3)}});
  push(3, {{4, unit_axis(3)}});
  stop();  // tracks 2, 3 ended while playing, 4 at stop
  EXPECT_EQ(counter("unknowns-kept"), 1u);
  EXPECT_EQ(counter("unknowns-dropped"), 3u);
  int about_unknowns = 0;
  for (const std::string& w : warnings())
    if (w.find("unknown face") != std::string::npos) {
      ++about_unknowns;
      EXPECT_NE(w.find(people.string() + ": the file is gone"), std::string::npos) << w;
    }
  EXPECT_EQ(about_unknowns, 1);
}

// Issue 29 bug 2: the gallery replaced under its name (`mv new.db people.db`) while the writer has
// the old file open: the faces go into the file the path names now.
TEST_F(IdentifyHarnessTest, KeepUnknownsGalleryReplacedWhileWritingWritesIntoTheNewFile) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true min-votes=1 track-timeout=0 poll-interval=0");
  push(0, {{1, unit_axis(3)}});
  push(1, {{2, unit_axis(3)}});
  ASSERT_TRUE(wait_for_counter("unknowns-kept", 1));
  fs::rename(make_gallery("new.db", {{"bob", {unit_axis(1)}}}), people);
  push(2, {{3, unit_axis(3)}});
  push(3, {{4, unit_axis(3)}});
  stop();
  EXPECT_EQ(counter("unknowns-kept"), 4u);
  EXPECT_EQ(counter("unknowns-dropped"), 0u);
  const std::vector<gallery::UnknownFaceRow> rows = kept_unknowns(people);
  ASSERT_EQ(rows.size(), 3u);
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].track_id, std::int64_t(i) + 2);
  for (const std::string& w : warnings()) EXPECT_EQ(w.find("unknown face"), std::string::npos) << w;
}

// ... and replaced by a gallery of another model: nothing is written into it (its unknown faces
// could never be compared with this model's), the faces are dropped, counted, one warning.
TEST_F(IdentifyHarnessTest, KeepUnknownsGalleryReplacedByAnotherModelsDropsAndWarnsOnce) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true min-votes=1 track-timeout=0 poll-interval=0");
  push(0, {{1, unit_axis(3)}});
  push(1, {{2, unit_axis(3)}});
  ASSERT_TRUE(wait_for_counter("unknowns-kept", 1));
  {
    auto other = GalleryStore::create(dir_ / "other.db", {std::string(64, 'f'), "other"}, kDim);
    ASSERT_TRUE(other.ok()) << other.error().message;
  }
  fs::rename(dir_ / "other.db", people);
  push(2, {{3, unit_axis(3)}});
  push(3, {{4, unit_axis(3)}});
  stop();
  EXPECT_EQ(counter("unknowns-kept"), 1u);
  EXPECT_EQ(counter("unknowns-dropped"), 3u);
  EXPECT_TRUE(kept_unknowns(people).empty());
  int about_unknowns = 0;
  for (const std::string& w : warnings())
    if (w.find("unknown face") != std::string::npos) {
      ++about_unknowns;
      EXPECT_NE(w.find("another model"), std::string::npos) << w;
    }
  EXPECT_EQ(about_unknowns, 1);
}

// Issue 29 bug 3: no message names a PostgreSQL gallery with its password, in any form (the
// keyword, a malformed URI libpq's parse error quotes, a query parameter); the rest still names it.
TEST_F(IdentifyHarnessTest, GalleryMessagesNeverShowAPassword) {
  for (const std::string& location :
       {"host=" + dir_.string() + " port=5 user=nobody dbname=g2 password=hunter2secret",
        std::string("postgresql://nobody:hunter2secret@[::1/g2"),
        "postgresql:///g2?host=" + dir_.string() + "&password=hunter2secret&user=nobody"}) {
    GstElement* identify = gst_element_factory_make("taconiteidentify", nullptr);
    g_object_set(identify, "gallery", location.c_str(), nullptr);
    const gsttest::StartFailure failure = gsttest::start_paused(identify);
    EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
    const std::string said = failure.message + " | " + failure.debug;
    EXPECT_EQ(said.find("hunter2secret"), std::string::npos) << said;
    EXPECT_NE(said.find("Could not load the gallery"), std::string::npos) << said;
    EXPECT_NE(said.find("g2"), std::string::npos) << said;
    EXPECT_NE(said.find("nobody"), std::string::npos) << said;
  }
}

// Issue 29 bug 4: a service file that is a FIFO fails the start at once, naming the variable and
// the path, instead of blocking inside libpq. (A regression would block: after 30 s the FIFO is
// opened for writing, which releases libpq, and the test fails.)
TEST_F(IdentifyHarnessTest, AServiceFileThatIsAFifoFailsTheStartInsteadOfHanging) {
  const fs::path fifo = dir_ / "svc.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ::setenv("PGSERVICEFILE", fifo.c_str(), 1);
  GstElement* identify = gst_element_factory_make("taconiteidentify", nullptr);
  g_object_set(identify, "gallery", "service=gal", nullptr);
  std::promise<gsttest::StartFailure> started;
  std::future<gsttest::StartFailure> result = started.get_future();
  std::thread starter([&] { started.set_value(gsttest::start_paused(identify)); });
  const bool in_time = result.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  if (!in_time) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
  }
  starter.join();
  ::unsetenv("PGSERVICEFILE");
  EXPECT_TRUE(in_time) << "the start blocked on the FIFO";
  const gsttest::StartFailure failure = result.get();
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.debug.find("PGSERVICEFILE names " + fifo.string()), std::string::npos) << failure.debug;
  EXPECT_NE(failure.debug.find("is a FIFO"), std::string::npos) << failure.debug;
}

// Frames in memory the element cannot read: the face is kept without a picture, one warning.
TEST_F(IdentifyHarnessTest, KeepUnknownsUnreadableFramesKeepTheEmbeddingWithoutPicture) {
  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  h_ = gst_harness_new_parse(("taconiteidentify name=identify keep-unknowns=true min-votes=1 track-timeout=0 "
                              "gallery=\"" + people.string() + "\"").c_str());
  identify_ = gst_bin_get_by_name(GST_BIN(h_->element), "identify");
  bus_ = gst_bus_new();
  gst_element_set_bus(h_->element, bus_);
  gst_harness_set_src_caps_str(h_, "video/x-raw(memory:NotSystem),format=RGB,width=112,height=112,framerate=30/1");
  for (int frame = 0; frame < 3; ++frame) push(frame, {{frame + 1, unit_axis(3)}});
  stop();
  const std::vector<gallery::UnknownFaceRow> rows = kept_unknowns(people);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.jpeg.empty());
    EXPECT_EQ(r.embedding.size(), std::size_t(kDim));
  }
  int about_pictures = 0;
  for (const std::string& w : warnings()) about_pictures += w.find("without pictures") != std::string::npos;
  EXPECT_EQ(about_pictures, 1);
}

void count_warning(const gchar*, GLogLevelFlags, const gchar*, gpointer data) { ++*static_cast<int*>(data); }

// Hostile values: retention bounds outside 1..100000 faces / 1 s..100 years are refused by GObject
// (a warning, the value unchanged); a stream name the gallery refuses (a control character) drops
// each face with one warning naming the problem, and the video flows.
TEST_F(IdentifyHarnessTest, KeepUnknownsHostileValuesAreRefused) {
  GstElement* fresh = gst_element_factory_make("taconiteidentify", nullptr);
  ASSERT_NE(fresh, nullptr);
  int refused = 0;
  const guint handler = g_log_set_handler("GLib-GObject", G_LOG_LEVEL_WARNING, count_warning, &refused);
  g_object_set(fresh, "unknowns-max-count", 0u, nullptr);
  g_object_set(fresh, "unknowns-max-count", 100001u, nullptr);
  g_object_set(fresh, "unknowns-max-age", guint64(0), nullptr);
  g_object_set(fresh, "unknowns-max-age", G_MAXUINT64, nullptr);
  g_log_remove_handler("GLib-GObject", handler);
  EXPECT_EQ(refused, 4);
  guint max_count = 0;
  guint64 max_age = 0;
  g_object_get(fresh, "unknowns-max-count", &max_count, "unknowns-max-age", &max_age, nullptr);
  EXPECT_EQ(max_count, 10000u);
  EXPECT_EQ(max_age, guint64(30 * 24 * 3600));
  gst_object_unref(fresh);

  const fs::path people = make_gallery("people.db", {{"alice", {unit_axis(0)}}});
  start("gallery=\"" + people.string() + "\" keep-unknowns=true min-votes=1 track-timeout=0");
  g_object_set(identify_, "stream", "door\n1", nullptr);
  for (int frame = 0; frame < 4; ++frame) push(frame, {{frame + 1, unit_axis(3)}});  // push() checks GST_FLOW_OK
  stop();
  EXPECT_EQ(counter("unknowns-kept"), 0u);
  EXPECT_EQ(counter("unknowns-dropped"), 4u);
  int about_unknowns = 0;
  for (const std::string& w : warnings())
    if (w.find("unknown face") != std::string::npos) {
      ++about_unknowns;
      EXPECT_NE(w.find("stream"), std::string::npos) << w;
    }
  EXPECT_EQ(about_unknowns, 1);
  EXPECT_TRUE(kept_unknowns(people).empty());
}

// The real pipeline: messi is not in the astronaut's gallery. Each track that ended decided unknown
// (its last taconite-identity message) is kept once; messi's with its stream, track, time span,
// nearest identity (the astronaut, below the threshold), 512-value embedding and aligned 112x112 JPEG.
void expect_unknown_tracks_kept(const std::string& location, const std::string& stream, const PipelineRun& result,
                                gint64 track) {
  std::map<gint64, std::string> last_state;
  for (GstStructure* s : result.identity_messages) {
    gint64 id = -1;
    if (gst_structure_get_int64(s, "track-id", &id)) last_state[id] = gst_structure_get_string(s, "label-state");
  }
  ASSERT_EQ(last_state[track], "unknown");
  const auto unknown_tracks = std::count_if(last_state.begin(), last_state.end(),
                                            [](const auto& entry) { return entry.second == "unknown"; });
  const std::vector<gallery::UnknownFaceRow> rows = kept_unknowns(location);
  EXPECT_EQ(rows.size(), std::size_t(unknown_tracks));
  int of_track = 0;
  for (const gallery::UnknownFaceRow& r : rows) {
    EXPECT_EQ(r.stream, stream);
    EXPECT_LE(r.first_seen_ms, r.last_seen_ms);
    if (r.track_id != track) continue;
    ++of_track;
    EXPECT_EQ(r.nearest_name, "astronaut");
    EXPECT_LT(r.nearest_similarity, 0.4);
    EXPECT_EQ(r.embedding.size(), 512u);
    const cv::Mat picture = cv::imdecode(r.jpeg, cv::IMREAD_COLOR);
    EXPECT_EQ(picture.cols, 112);
    EXPECT_EQ(picture.rows, 112);
  }
  EXPECT_EQ(of_track, 1);
}

TEST_F(IdentifyTest, UnknownTrackIsKeptOnceWithItsAlignedPicture) {
  const std::string kept = (dir_ / "unknowns-sqlite.db").string();
  fs::copy_file(gallery("astronaut"), kept);
  Observed observed;
  PipelineRun result;
  run(messi_, 16, "gallery=\"" + kept + "\" keep-unknowns=true stream=cam-test", observed, result);
  ASSERT_EQ(result.error, "");
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();
  const gint64 track = main_track(observed);
  ASSERT_GE(track, 0) << "no tracked face";
  expect_unknown_tracks_kept(kept, "cam-test", result, track);
}

// Issue 30: the recommended front end (taconitedetect YuNet, taconitetrack, best-shot embedding:
// about one embedding per track) decides messi's track on its embedding, unknown to the astronaut
// gallery, and keep-unknowns keeps it (it ended pending before, and nothing was kept).
TEST_F(IdentifyTest, BestShotUnknownTrackIsKeptWithTheYuNetFrontEnd) {
  if (!fs::exists(env("TACONITE_YUNET_MODEL")))
    GTEST_SKIP() << "no YuNet model at '" << env("TACONITE_YUNET_MODEL") << "' (../shared/models)";
  const std::string kept = (dir_ / "unknowns-best-shot.db").string();
  fs::copy_file(gallery("astronaut"), kept);
  Observed observed;
  PipelineRun result;
  run(messi_, 16, "gallery=\"" + kept + "\" keep-unknowns=true stream=cam-best", observed, result, 1, yunet_front());
  ASSERT_EQ(result.error, "");
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();
  const gint64 track = main_track(observed);
  ASSERT_GE(track, 0) << "no tracked face";
  // Decided from its first embedding on: once labelled, labelled on every later frame showing it.
  bool labelled = false;
  for (const auto& frame : observed.labels)
    if (const auto it = frame.find(track); it != frame.end()) {
      if (labelled) {
        EXPECT_EQ(it->second, "unknown");
      }
      labelled = labelled || !it->second.empty();
    }
  EXPECT_TRUE(labelled);
  expect_unknown_tracks_kept(kept, "cam-best", result, track);
}

// The same into a PostgreSQL gallery (tests/gallery/test_gallery_postgres.py gives the database).
TEST_F(IdentifyTest, PostgresGalleryKeepsUnknownFaces) {
  const std::string database = env("TACONITE_TEST_PG_UNKNOWNS_GALLERY");
  if (database.empty()) GTEST_SKIP() << "needs a PostgreSQL server (run by the gallery-postgres test)";
  ASSERT_EQ(cli({"copy", gallery("astronaut"), database}), 0);
  Observed observed;
  PipelineRun result;
  run(messi_, 16, "gallery=\"" + database + "\" keep-unknowns=true stream=cam-pg", observed, result);
  ASSERT_EQ(result.error, "");
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();
  const gint64 track = main_track(observed);
  ASSERT_GE(track, 0) << "no tracked face";
  expect_unknown_tracks_kept(database, "cam-pg", result, track);
}

}  // namespace
