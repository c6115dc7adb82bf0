#include "gst_test_support.hpp"

#include <gst/taconite/gsttaconitetracks.h>

#include <cmath>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

#include "gsttaconiteadaface.h"
#include "gsttaconitecamera.h"
#include "gsttaconitedetect.h"
#include "gsttaconiteidentify.h"
#include "gsttaconitelandmarks.h"
#include "gsttaconiteoverlay.h"
#include "gsttaconitepublish.h"
#include "gsttaconitetrack.h"
#include "taconite/embedder.hpp"

namespace gsttest {

void FakeEngineState::close_gate() {
  std::lock_guard<std::mutex> guard(lock);
  gate_open = false;
}

void FakeEngineState::open_gate() {
  std::lock_guard<std::mutex> guard(lock);
  gate_open = true;
  changed.notify_all();
}

void FakeEngineState::wait_for_waiting_calls(int n) {
  std::unique_lock<std::mutex> guard(lock);
  changed.wait(guard, [&] { return calls_waiting >= n; });
}

std::size_t FakeEngineState::faces_seen() {
  std::lock_guard<std::mutex> guard(lock);
  return inputs.size();
}

std::vector<float> fake_embedding(const std::vector<float>& chw) {
  const std::size_t plane = chw.size() / 3;
  double mean[3] = {0, 0, 0};
  for (int c = 0; c < 3; ++c) {
    for (std::size_t i = 0; i < plane; ++i) mean[c] += chw[c * plane + i];
    mean[c] /= static_cast<double>(plane);
  }
  std::vector<float> e(512);
  for (int k = 0; k < 512; ++k) e[k] = static_cast<float>(2.0 + mean[k % 3] * (1.0 + k / 512.0) + 0.01 * (k % 7));
  return e;
}

namespace {

class FakeEngine final : public taconite::gst::EngineClient {
 public:
  explicit FakeEngine(std::shared_ptr<FakeEngineState> state) : state_(std::move(state)) {
    info_.model = "fake-model";
    info_.backend = "fake";
    info_.embed_dim = 512;
    info_.input_width = 112;
    info_.input_height = 112;
    info_.preprocessing = {112, 112, taconite::PlaneOrder::Rgb, {0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f}};  // a bundle's
  }
  const taconite::gst::EngineInfo& info() const override { return info_; }

  // Sessions of one fake model: they share the state (and its gate), as sessions share a Model.
  taconite::Result<std::unique_ptr<taconite::gst::EngineClient>> another_session() const override {
    return std::unique_ptr<taconite::gst::EngineClient>(std::make_unique<FakeEngine>(state_));
  }

  taconite::Result<std::vector<taconite::Embedding>> embed(std::span<const taconite::FaceChw> faces) override {
    std::unique_lock<std::mutex> guard(state_->lock);
    ++state_->calls_waiting;
    state_->changed.notify_all();
    state_->changed.wait(guard, [&] { return state_->gate_open; });
    --state_->calls_waiting;
    if (const int delay_ms = state_->delay_ms; delay_ms > 0) {
      guard.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      guard.lock();
    }
    if (state_->fail_embed) return taconite::Error{taconite::ErrorKind::Device, "fake device failure"};
    state_->batch_sizes.push_back(faces.size());
    std::vector<taconite::Embedding> out;
    for (const taconite::FaceChw& face : faces) {
      state_->inputs.emplace_back(face.data.begin(), face.data.end());
      out.push_back(fake_embedding(state_->inputs.back()));
      if (state_->infinite) {
        out.back()[0] = std::numeric_limits<float>::infinity();
        out.back()[1] = -std::numeric_limits<float>::infinity();
      }
    }
    return out;
  }

 private:
  std::shared_ptr<FakeEngineState> state_;
  taconite::gst::EngineInfo info_;
};

}  // namespace

std::shared_ptr<FakeEngineState> install_fake_engine() {
  auto state = std::make_shared<FakeEngineState>();
  std::filesystem::create_directories("fake");  // the elements' bundle: the engine registry resolves its path
  taconite::gst::set_engine_opener([state](const taconite::gst::EngineRequest&) {
    {
      std::lock_guard<std::mutex> guard(state->lock);
      ++state->opened;
    }
    return taconite::Result<std::unique_ptr<taconite::gst::EngineClient>>(
        std::unique_ptr<taconite::gst::EngineClient>(std::make_unique<FakeEngine>(state)));
  });
  return state;
}

void uninstall_fake_engine() { taconite::gst::set_engine_opener({}); }

GstHarness* adaface_harness(const std::vector<std::pair<std::string, std::string>>& properties) {
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  if (!element) return nullptr;
  for (const auto& [name, value] : properties) gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  GstHarness* h = gst_harness_new_empty();
  static GstStaticPadTemplate src = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
  static GstStaticPadTemplate sink = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
  gst_harness_add_element_full(h, element, &src, "sink", &sink, "src");
  gst_object_unref(element);
  return h;
}

GstBuffer* stream_frame(int index, std::uint8_t shade) {
  GstBuffer* buffer = rgb_buffer(112, 112, [&](int x, int y) {
    return std::array<std::uint8_t, 3>{shade, static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y + index)};
  });
  GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(index) * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  return buffer;
}

guint64 counter(GstElement* element, const char* name) {
  guint64 value = 0;
  g_object_get(element, name, &value, nullptr);
  return value;
}

GstBuffer* rgb_buffer(int width, int height, const PixelFn& pixel) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_RGB, static_cast<guint>(width), static_cast<guint>(height));
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  const int stride = GST_VIDEO_INFO_PLANE_STRIDE(&info, 0);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto px = pixel(x, y);
      std::memcpy(map.data + y * stride + x * 3, px.data(), 3);
    }
  gst_buffer_unmap(buffer, &map);
  return buffer;
}

GstBuffer* convert_rgb(GstBuffer* rgb, int width, int height, const char* format) {
  return convert_video(rgb, width, height, "RGB", format);
}

GstBuffer* convert_video(GstBuffer* buffer, int width, int height, const char* from, const char* to) {
  gchar* desc = g_strdup_printf(
      "appsrc name=in caps=video/x-raw,format=%s,width=%d,height=%d,framerate=0/1 ! videoconvert ! "
      "video/x-raw,format=%s ! appsink name=out sync=false",
      from, width, height, to);
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(desc, &error);
  g_free(desc);
  if (!pipeline) {
    g_clear_error(&error);
    return nullptr;
  }
  GstElement* in = gst_bin_get_by_name(GST_BIN(pipeline), "in");
  GstElement* out = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstFlowReturn ret = GST_FLOW_OK;
  g_signal_emit_by_name(in, "push-buffer", buffer, &ret);
  GstSample* sample = nullptr;
  g_signal_emit_by_name(out, "pull-sample", &sample);
  GstBuffer* converted = nullptr;
  if (sample) {
    // Deep copy: the result must not share pool memory with a pipeline we are about to stop.
    converted = gst_buffer_copy_deep(gst_sample_get_buffer(sample));
    gst_sample_unref(sample);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(in);
  gst_object_unref(out);
  gst_object_unref(pipeline);
  return converted;
}

GstBuffer* restride(GstBuffer* buffer, const char* format, int width, int height, int extra) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, gst_video_format_from_string(format), static_cast<guint>(width),
                            static_cast<guint>(height));
  GstVideoFrame src;
  if (!gst_video_frame_map(&src, &info, buffer, GST_MAP_READ)) return nullptr;
  // For every accepted format, plane p's row count is component p's height (NV12's UV plane
  // is component 1).
  const guint planes = GST_VIDEO_INFO_N_PLANES(&info);
  gsize offsets[GST_VIDEO_MAX_PLANES] = {};
  gint strides[GST_VIDEO_MAX_PLANES] = {};
  gsize total = 64;  // a leading gap, so plane 0 does not start at offset 0 either
  for (guint p = 0; p < planes; ++p) {
    offsets[p] = total;
    strides[p] = GST_VIDEO_FRAME_PLANE_STRIDE(&src, p) + extra;
    total += static_cast<gsize>(strides[p]) * GST_VIDEO_FRAME_COMP_HEIGHT(&src, p) + 32;
  }
  GstBuffer* out = gst_buffer_new_allocate(nullptr, total, nullptr);
  GstMapInfo map;
  gst_buffer_map(out, &map, GST_MAP_WRITE);
  std::memset(map.data, 0xAB, map.size);  // garbage in the padding: the element must skip it
  for (guint p = 0; p < planes; ++p) {
    const gint row_bytes = GST_VIDEO_FRAME_PLANE_STRIDE(&src, p);
    for (gint y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&src, p); ++y)
      std::memcpy(map.data + offsets[p] + static_cast<gsize>(y) * strides[p],
                  static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&src, p)) + static_cast<gsize>(y) * row_bytes,
                  static_cast<gsize>(row_bytes));
  }
  gst_buffer_unmap(out, &map);
  gst_video_frame_unmap(&src);
  gst_buffer_add_video_meta_full(out, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(&info),
                                 static_cast<guint>(width), static_cast<guint>(height), planes, offsets, strides);
  return out;
}

std::vector<GstTaconiteEmbeddingMeta*> embedding_metas(GstBuffer* buffer) {
  std::vector<GstTaconiteEmbeddingMeta*> metas;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_TACONITE_EMBEDDING_META_API_TYPE))
    metas.push_back(reinterpret_cast<GstTaconiteEmbeddingMeta*>(meta));
  return metas;
}

std::vector<EndedEvent> ended_events(GstHarness* h) {
  std::vector<EndedEvent> out;
  while (GstEvent* event = gst_harness_try_pull_event(h)) {
    if (gst_taconite_event_is_tracks_ended(event)) {
      EndedEvent e{gst_taconite_tracks_ended_event_get_reason(event), {}};
      for (guint i = 0; i < gst_taconite_tracks_ended_event_get_size(event); ++i) {
        gint64 id = 0;
        const gchar* uid = nullptr;
        EXPECT_TRUE(gst_taconite_tracks_ended_event_get_track(event, i, &id, &uid));
        e.tracks.emplace_back(id, uid ? uid : "");
      }
      out.push_back(std::move(e));
    }
    gst_event_unref(event);
  }
  return out;
}

GstEvent* tracks_ended_event(gint64 id, const char* uid, const char* reason) {
  const gchar* uids[] = {uid};
  return gst_taconite_tracks_ended_event_new(&id, uids, 1, reason);
}

std::string test_bundle() {
  const char* bundle = std::getenv("TACONITE_TEST_BUNDLE");
  return bundle ? bundle : "";
}

std::string test_backend() {
  for (const std::string& name : taconite::compiled_backends())
    if (name == "cpu") return "cpu";
  return "cpu-reference";
}

GstMessage* pop_error(GstBus* bus) { return gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR); }

StartFailure start_paused(GstElement* element) {
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(element, bus);
  StartFailure failure;
  failure.state_change = gst_element_set_state(element, GST_STATE_PAUSED);
  if (GstMessage* error = pop_error(bus)) {
    GError* gerror = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(error, &gerror, &debug);
    failure.domain = gerror->domain;
    failure.code = gerror->code;
    failure.message = gerror->message;
    failure.debug = debug ? debug : "";
    g_error_free(gerror);
    g_free(debug);
    gst_message_unref(error);
  }
  gst_element_set_state(element, GST_STATE_NULL);
  gst_element_set_bus(element, nullptr);
  gst_object_unref(bus);
  gst_object_unref(element);
  return failure;
}

std::vector<float> expected_chw(int width, int height, const PixelFn& pixel, bool bgr) {
  const std::size_t plane = static_cast<std::size_t>(width) * height;
  std::vector<float> chw(3 * plane);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto px = pixel(x, y);
      for (int c = 0; c < 3; ++c) {
        const int source = bgr ? 2 - c : c;
        chw[c * plane + static_cast<std::size_t>(y) * width + x] = (px[source] / 255.0f - 0.5f) / 0.5f;
      }
    }
  return chw;
}

}  // namespace gsttest

// gst_init plus the elements registered statically (tests link it; no plugin path needed).
int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  GST_ELEMENT_REGISTER(taconiteadaface, nullptr);
  GST_ELEMENT_REGISTER(taconitecamera, nullptr);
  GST_ELEMENT_REGISTER(taconitedetect, nullptr);
  GST_ELEMENT_REGISTER(taconitelandmarks, nullptr);
  GST_ELEMENT_REGISTER(taconitetrack, nullptr);
  GST_ELEMENT_REGISTER(taconitepublish, nullptr);
  GST_ELEMENT_REGISTER(taconiteidentify, nullptr);
  GST_ELEMENT_REGISTER(taconiteoverlay, nullptr);
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  gst_deinit();
  return result;
}
