// taconiteidentify on real pipelines: the demo video (python3-skimage's astronaut, panned and
// zoomed) and opencv-doc's messi5.jpg through facedetect -> taconitelandmarks -> taconitetrack ->
// taconiteadaface (the IR-tiny test bundle) -> taconiteidentify, with galleries enrolled by the
// real taconite-gallery CLI from the still photos.
//
// Honest scope: the test bundle's weights are synthetic, so its embeddings are meaningless as
// identities ACROSS different photos of a person. What holds for them, and all these tests assert,
// is that the same face (the enrolled photo, seen again through pan, zoom, detection and alignment)
// matches itself far above the threshold, and a different face (messi vs the astronaut) does not.
#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gallery_store.hpp"
#include "gst_test_support.hpp"

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
    labels[id] = identity ? gst_structure_get_string(identity, "label") : "";
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
                  PipelineRun& result, int reinfer_interval = 1) {
    const std::string description =
        "filesrc location=\"" + photo +
        "\" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! imagefreeze "
        "num-buffers=" +
        std::to_string(frames) + " ! video/x-raw,framerate=" + std::to_string(kFps) +
        "/1 ! videobox name=window ! videoscale ! video/x-raw,width=480,height=480,pixel-aspect-ratio=1/1 ! "
        "videoconvert ! facedetect display=false ! taconitelandmarks ! taconitetrack ! taconiteadaface bundle=\"" +
        bundle_ + "\" backend=" + gsttest::test_backend() +
        " input-mode=rois reinfer-interval=" + std::to_string(reinfer_interval) + " ! taconiteidentify name=identify " +
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
  Observed observed;
  std::thread writer;
  std::string write_error;
  // The first embedding the pipeline computes is enrolled from another thread and connection
  // while the pipeline plays (a WAL writer next to the element's reader).
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
  run(astronaut_, 40, "gallery=\"" + live + "\" poll-interval=50", observed, result);
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
